/**
 * How every process that runs a proxy is launched — the detached supervisor (`moat run`), the
 * foreground one (`moat run --foreground`, `moat start -f`) and a Kubernetes pod's `moat proxy`
 * (the operator's Deployment) — with the runtime settings that keep its resident memory near what
 * it needs (docs/performance.md, "Memory"). The one place these settings are written.
 */

/**
 * V8 flags for a proxy process. The proxy's live heap is about 12 MB, but under load V8 grows the
 * young generation to its default maximum (3 × 16 MB semi-spaces) and keeps it: a 2 MB
 * semi-space holds RSS after load about 60 MB lower; the scavenges it makes more frequent copy
 * only the few objects that outlive a request.
 */
export const PROXY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];

/**
 * Environment defaults for a proxy process; the user's own environment wins. glibc gives each
 * thread that allocates its own malloc arena (up to 8 per core), and memory freed in one is not
 * returned to the system: two arenas hold RSS after load about 5 MB lower. Allocations of 32 KB
 * and more (socket read buffers among them) get their own mapping, returned when freed, instead
 * of a place in an arena that glibc keeps after the load: RSS a minute after the load 17 MB
 * lower, no throughput cost measurable (docs/performance.md, "Back near idle after the load").
 */
export const PROXY_ENV_DEFAULTS: Readonly<Record<string, string>> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '32768',
};

/** The environment a proxy process starts with: the defaults under `env` (the user's settings win). */
export function proxyLaunchEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...PROXY_ENV_DEFAULTS, ...env };
}

/**
 * The settings as a container's environment, for a pod whose command is the image's entry point:
 * the V8 flags through NODE_OPTIONS (which accepts them), the rest as they are.
 */
export function proxyContainerEnv(): Record<string, string> {
  return { NODE_OPTIONS: PROXY_NODE_FLAGS.join(' '), ...PROXY_ENV_DEFAULTS };
}
