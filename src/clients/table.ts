/**
 * The clients Moat configures: where each keeps its MCP servers, in which format, and the entry
 * it understands. Sources: each client's documentation (docs/clients.md names them); the shapes
 * are checked by golden tests (table.test.ts) and, for the CLIs installable from npm, by the
 * clients' own `mcp list` commands (test/integration/clients/).
 */
import { join } from 'node:path';
import { appConfigDir, xdgConfigDir } from './platform.js';
import type { ClientSpec, Endpoint, EntryAuth } from './types.js';

/** `Authorization: Bearer <reference to the variable>` in the client's own syntax. */
function headers(
  auth: EntryAuth,
  reference: ((name: string) => string) | undefined,
): Record<string, unknown> {
  if (auth.kind !== 'header' || !reference) return {};
  return { headers: { Authorization: `Bearer ${reference(auth.envVar)}` } };
}

const dollarBraces = (name: string) => `\${${name}}`;
const dollarEnv = (name: string) => `\${env:${name}}`;

function onlyStreamable(title: string, endpoint: Endpoint): { unsupported: string } | undefined {
  return endpoint.transport === 'streamable-http'
    ? undefined
    : { unsupported: `${title} speaks only streamable HTTP, and "${endpoint.name}" serves legacy SSE` };
}

/** VS Code and its Insiders build share the format; only the directory differs. */
function vscode(id: string, title: string, dir: string): ClientSpec {
  return {
    id,
    title,
    file: (env) => join(appConfigDir(env), dir, 'User', 'mcp.json'),
    documented: {
      linux: `~/.config/${dir}/User/mcp.json`,
      macos: `~/Library/Application Support/${dir}/User/mcp.json`,
      windows: `%APPDATA%\\${dir}\\User\\mcp.json`,
    },
    format: 'jsonc',
    at: { path: ['servers'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    envReference: dollarEnv,
    entry: (e, auth) => ({
      type: e.transport === 'sse' ? 'sse' : 'http',
      url: e.url,
      ...headers(auth, dollarEnv),
    }),
    command: id === 'vscode' ? 'code' : 'code-insiders',
  };
}

/** Gemini CLI and its fork Qwen Code: `httpUrl` for streamable HTTP, `url` for SSE. */
function geminiLike(id: string, title: string, dir: string, command: string): ClientSpec {
  return {
    id,
    title,
    file: ({ home }) => join(home, dir, 'settings.json'),
    documented: {
      linux: `~/${dir}/settings.json`,
      macos: `~/${dir}/settings.json`,
      windows: `%USERPROFILE%\\${dir}\\settings.json`,
    },
    format: 'jsonc',
    at: { path: ['mcpServers'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    envReference: dollarBraces,
    entry: (e, auth) => ({
      [e.transport === 'sse' ? 'url' : 'httpUrl']: e.url,
      ...headers(auth, dollarBraces),
    }),
    command,
  };
}

/** JSON files in the home directory with `mcpServers.<name>.url` (Cursor, Kiro, LM Studio). */
function homeMcpServers(
  id: string,
  title: string,
  relative: string[],
  options: Pick<ClientSpec, 'oauthDiscovery' | 'envReference' | 'transports'>,
): ClientSpec {
  const shown = relative.join('/');
  return {
    id,
    title,
    file: ({ home }) => join(home, ...relative),
    documented: {
      linux: `~/${shown}`,
      macos: `~/${shown}`,
      windows: `%USERPROFILE%\\${relative.join('\\')}`,
    },
    format: 'json',
    at: { path: ['mcpServers'] },
    ...options,
    entry: (e, auth) =>
      (!options.transports.includes('sse') && onlyStreamable(title, e)) || {
        url: e.url,
        ...headers(auth, options.envReference),
      },
  };
}

export const CLIENTS: readonly ClientSpec[] = [
  {
    id: 'claude-code',
    title: 'Claude Code',
    // CLAUDE_CONFIG_DIR moves the whole configuration, ~/.claude.json included.
    file: ({ home, env }) => join(env.CLAUDE_CONFIG_DIR || home, '.claude.json'),
    documented: { linux: '~/.claude.json', macos: '~/.claude.json', windows: '%USERPROFILE%\\.claude.json' },
    format: 'json',
    at: { path: ['mcpServers'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    envReference: dollarBraces,
    entry: (e, auth) => ({
      type: e.transport === 'sse' ? 'sse' : 'http',
      url: e.url,
      ...headers(auth, dollarBraces),
    }),
    command: 'claude',
  },
  {
    id: 'claude-desktop',
    title: 'Claude Desktop',
    file: (env) => join(appConfigDir(env), 'Claude', 'claude_desktop_config.json'),
    documented: {
      linux: '~/.config/Claude/claude_desktop_config.json',
      macos: '~/Library/Application Support/Claude/claude_desktop_config.json',
      windows: '%APPDATA%\\Claude\\claude_desktop_config.json',
    },
    format: 'json',
    at: { path: ['mcpServers'] },
    // Its config file takes only commands: mcp-remote bridges stdio to the proxy and does OAuth itself.
    transports: ['stdio-shim'],
    oauthDiscovery: true,
    envReference: dollarBraces,
    entry: (e, auth) => ({
      command: 'npx',
      args: [
        '-y',
        'mcp-remote',
        e.url,
        '--transport',
        e.transport === 'sse' ? 'sse-only' : 'http-only',
        ...(auth.kind === 'header' ? ['--header', `Authorization:Bearer ${dollarBraces(auth.envVar)}`] : []),
      ],
    }),
  },
  homeMcpServers('cursor', 'Cursor', ['.cursor', 'mcp.json'], {
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    envReference: dollarEnv,
  }),
  vscode('vscode', 'VS Code', 'Code'),
  vscode('vscode-insiders', 'VS Code Insiders', 'Code - Insiders'),
  {
    id: 'windsurf',
    title: 'Windsurf',
    file: ({ home }) => join(home, '.codeium', 'windsurf', 'mcp_config.json'),
    documented: {
      linux: '~/.codeium/windsurf/mcp_config.json',
      macos: '~/.codeium/windsurf/mcp_config.json',
      windows: '%USERPROFILE%\\.codeium\\windsurf\\mcp_config.json',
    },
    format: 'json',
    at: { path: ['mcpServers'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    envReference: dollarEnv,
    entry: (e, auth) => ({ serverUrl: e.url, ...headers(auth, dollarEnv) }),
    command: 'windsurf',
  },
  {
    id: 'zed',
    title: 'Zed',
    file: (env) =>
      env.platform === 'win32'
        ? join(appConfigDir(env), 'Zed', 'settings.json')
        : join(xdgConfigDir(env), 'zed', 'settings.json'),
    documented: {
      linux: '~/.config/zed/settings.json',
      macos: '~/.config/zed/settings.json',
      windows: '%APPDATA%\\Zed\\settings.json',
    },
    format: 'jsonc',
    at: { path: ['context_servers'] },
    transports: ['streamable-http'],
    oauthDiscovery: true,
    // Zed's settings do not expand environment variables: OIDC workloads use its OAuth sign-in.
    entry: (e) => onlyStreamable('Zed', e) ?? { url: e.url },
    command: 'zed',
  },
  {
    id: 'codex',
    title: 'Codex',
    file: ({ home, env }) => join(env.CODEX_HOME || join(home, '.codex'), 'config.toml'),
    documented: {
      linux: '~/.codex/config.toml ($CODEX_HOME)',
      macos: '~/.codex/config.toml ($CODEX_HOME)',
      windows: '%USERPROFILE%\\.codex\\config.toml',
    },
    format: 'toml',
    at: { path: ['mcp_servers'] },
    transports: ['streamable-http'],
    oauthDiscovery: true,
    // Codex names the variable itself and sends `Authorization: Bearer <value>`.
    envReference: (name) => name,
    entry: (e, auth) =>
      onlyStreamable('Codex', e) ?? {
        url: e.url,
        ...(auth.kind === 'header' ? { bearer_token_env_var: auth.envVar } : {}),
      },
    command: 'codex',
  },
  geminiLike('gemini-cli', 'Gemini CLI', '.gemini', 'gemini'),
  geminiLike('qwen-code', 'Qwen Code', '.qwen', 'qwen'),
  {
    id: 'opencode',
    title: 'opencode',
    file: (env) => join(xdgConfigDir(env), 'opencode', 'opencode.json'),
    documented: {
      linux: '~/.config/opencode/opencode.json',
      macos: '~/.config/opencode/opencode.json',
      windows: '%USERPROFILE%\\.config\\opencode\\opencode.json',
    },
    format: 'jsonc',
    at: { path: ['mcp'] },
    // opencode's remote servers try streamable HTTP, then SSE, at the same URL.
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    envReference: (name) => `{env:${name}}`,
    entry: (e, auth) => ({
      type: 'remote',
      url: e.url,
      enabled: true,
      ...headers(auth, (name) => `{env:${name}}`),
    }),
    command: 'opencode',
  },
  {
    id: 'copilot-cli',
    title: 'GitHub Copilot CLI',
    file: ({ home, env }) => join(env.COPILOT_HOME || join(home, '.copilot'), 'mcp-config.json'),
    documented: {
      linux: '~/.copilot/mcp-config.json',
      macos: '~/.copilot/mcp-config.json',
      windows: '%USERPROFILE%\\.copilot\\mcp-config.json',
    },
    format: 'json',
    at: { path: ['mcpServers'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: false,
    entry: (e) => ({ type: e.transport === 'sse' ? 'sse' : 'http', url: e.url, tools: ['*'] }),
    command: 'copilot',
  },
  {
    id: 'cline',
    title: 'Cline',
    file: (env) =>
      join(
        appConfigDir(env),
        'Code',
        'User',
        'globalStorage',
        'saoudrizwan.claude-dev',
        'settings',
        'cline_mcp_settings.json',
      ),
    documented: {
      linux: '~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
      macos:
        '~/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json',
      windows:
        '%APPDATA%\\Code\\User\\globalStorage\\saoudrizwan.claude-dev\\settings\\cline_mcp_settings.json',
    },
    format: 'json',
    at: { path: ['mcpServers'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: false,
    entry: (e) => ({ type: e.transport === 'sse' ? 'sse' : 'streamableHttp', url: e.url, disabled: false }),
  },
  {
    id: 'continue',
    title: 'Continue',
    file: ({ home }) => join(home, '.continue', 'config.yaml'),
    documented: {
      linux: '~/.continue/config.yaml',
      macos: '~/.continue/config.yaml',
      windows: '%USERPROFILE%\\.continue\\config.yaml',
    },
    format: 'yaml',
    at: { path: ['mcpServers'], listKey: 'name' },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: false,
    entry: (e) => ({ name: e.name, type: e.transport === 'sse' ? 'sse' : 'streamable-http', url: e.url }),
  },
  {
    id: 'goose',
    title: 'Goose',
    file: (env) =>
      env.platform === 'win32'
        ? join(appConfigDir(env), 'Block', 'goose', 'config', 'config.yaml')
        : join(xdgConfigDir(env), 'goose', 'config.yaml'),
    documented: {
      linux: '~/.config/goose/config.yaml',
      macos: '~/.config/goose/config.yaml',
      windows: '%APPDATA%\\Block\\goose\\config\\config.yaml',
    },
    format: 'yaml',
    at: { path: ['extensions'] },
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: true,
    entry: (e) => ({
      enabled: true,
      type: e.transport === 'sse' ? 'sse' : 'streamable_http',
      name: e.name,
      uri: e.url,
      timeout: 300,
    }),
    command: 'goose',
  },
  homeMcpServers('kiro', 'Kiro', ['.kiro', 'settings', 'mcp.json'], {
    transports: ['streamable-http', 'sse'],
    oauthDiscovery: false,
  }),
  homeMcpServers('lm-studio', 'LM Studio', ['.lmstudio', 'mcp.json'], {
    transports: ['streamable-http'],
    oauthDiscovery: false,
  }),
];

export const CLIENT_IDS = CLIENTS.map((c) => c.id);

export function findClient(id: string): ClientSpec | undefined {
  return CLIENTS.find((c) => c.id === id);
}
