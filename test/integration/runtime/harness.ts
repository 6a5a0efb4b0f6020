/**
 * Shared setup for the runtime integration tests: a runtime on the test run's Podman, the
 * fixture server images, and workloads built from a RunConfig through buildContainerSpec
 * (the same path the workload layer takes), removed again after each test file.
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { runConfigSchema, type RunConfig, type RunConfigInput } from '../../../src/config/runconfig.js';
import { buildContainerSpec, httpTarget } from '../../../src/runtime/container-spec.js';
import type { ContainerRuntime, ContainerSpec } from '../../../src/runtime/types.js';
import { connectMcpOverPipes, type PipesTransport } from '../../fixtures/pipes-client.js';
import { testServerImage } from '../../support/images.js';
import { podmanCli, testRuntime, uniqueName } from '../../support/podman.js';

export interface Launched {
  id: string;
  spec: ContainerSpec;
  client: Client;
  /** Only for stdio workloads: the raw stdout seen by the client. */
  transport?: PipesTransport;
}

/** A later step of the workload layer applied to the built spec (e.g. ignore-file overlays). */
export type SpecTransform = (spec: ContainerSpec, config: RunConfig) => ContainerSpec;

export class Harness {
  private readonly created: string[] = [];
  private readonly clients: Client[] = [];
  private readonly servers: Server[] = [];

  private constructor(readonly runtime: ContainerRuntime) {}

  static async create(): Promise<Harness> {
    return new Harness(await testRuntime());
  }

  /** Builds the spec from a RunConfig (a fixture server image unless `image` is given) and creates the container. */
  async createOnly(
    overrides: Partial<RunConfigInput> = {},
    env: Record<string, string> = {},
    transform: SpecTransform = (spec) => spec,
  ): Promise<{ id: string; spec: ContainerSpec; targetPort: number }> {
    const transport = overrides.transport ?? 'stdio';
    const image =
      overrides.image ?? (await testServerImage(transport === 'stdio' ? 'stdio-server' : 'http-server'));
    const name = uniqueName('moat-rt');
    const config = runConfigSchema.parse({
      name,
      host: '127.0.0.1',
      port: 4000,
      ...(transport === 'stdio' ? {} : { target_port: 8080 }),
      ...overrides,
      transport,
      image,
    });
    const spec = transform(buildContainerSpec(config, env), config);
    const id = await this.runtime.createContainer(spec);
    this.created.push(id);
    return { id, spec, targetPort: config.target_port ?? 0 };
  }

  /** Creates and starts a fixture server container and connects an MCP client to it. */
  async launch(
    overrides: Partial<RunConfigInput> = {},
    env: Record<string, string> = {},
    transform?: SpecTransform,
  ): Promise<Launched> {
    const { id, spec, targetPort } = await this.createOnly(overrides, env, transform);
    if (spec.attachStdio) {
      const pipes = await this.runtime.attachStdio(id);
      await this.runtime.startContainer(id);
      const { client, transport: pipesTransport } = await connectMcpOverPipes(pipes);
      this.clients.push(client);
      return { id, spec, client, transport: pipesTransport };
    }
    await this.runtime.startContainer(id);
    const client = await this.connectHttp(id, spec, targetPort);
    return { id, spec, client };
  }

  /** Connects an MCP client to an HTTP server container, retrying while the server starts. */
  async connectHttp(id: string, spec: ContainerSpec, targetPort: number): Promise<Client> {
    let lastError: unknown;
    for (let attempt = 0; attempt < 150; attempt++) {
      const info = await this.runtime.inspectContainer(id);
      if (!info?.running) throw new Error(`container ${id} is not running (state ${info?.state})`);
      const target = httpTarget(spec, info, targetPort);
      if (target) {
        const client = new McpClient({ name: 'moat-test', version: '1.0.0' });
        try {
          await client.connect(
            new StreamableHTTPClientTransport(new URL(`http://${target.host}:${target.port}/mcp`)),
          );
          this.clients.push(client);
          return client;
        } catch (err) {
          lastError = err;
          await client.close().catch(() => undefined);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`the HTTP server in ${id} never answered: ${String(lastError)}`);
  }

  /**
   * The default bridge's gateway address: the host as a bridged container sees it. Starts a
   * bridged container first, because the host has that address only while the bridge is up.
   */
  async bridgeGateway(): Promise<string> {
    await this.launch();
    const [network] = JSON.parse(await podmanCli(['network', 'inspect', 'podman'])) as Array<{
      subnets: Array<{ gateway: string }>;
    }>;
    return network!.subnets[0]!.gateway;
  }

  /** A TCP server on the host at `host` (port 0, read back) that closes each connection; stopped by cleanup. */
  listenOnHost(host: string): Promise<number> {
    const server = createServer((socket) => {
      socket.on('error', () => undefined); // clients hang up at once (they only test reachability)
      socket.end('hello from the host\n');
    });
    this.servers.push(server);
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
    });
  }

  /** Removes every container (and its network and egress proxy); the first failure is rethrown after. */
  async cleanup(): Promise<void> {
    for (const server of this.servers) server.close();
    await Promise.all(this.clients.map((c) => c.close().catch(() => undefined)));
    const failures: unknown[] = [];
    for (const id of this.created)
      await this.runtime.removeContainer(id).catch((err: unknown) => failures.push(err));
    if (failures.length > 0) throw failures[0];
  }
}

export { uniqueName };
