/**
 * The catalog shipped with Moat: well-known MCP servers in server.json format, pinned to
 * versions that exist on npm and PyPI. A user registry (`moat config set-registry`) overrides an
 * entry of the same name. Reference servers need nothing outside their container, so they get
 * the `none` profile; fetch reads the web, so it gets `network`.
 */
import { MOAT_META, PUBLISHER_META, type RegistryServer } from './schema.js';

const REFERENCE_REPO = { url: 'https://github.com/modelcontextprotocol/servers', source: 'github' };

function moat(tags: string[], permissions?: 'none' | 'network'): RegistryServer['_meta'] {
  return { [PUBLISHER_META]: { [MOAT_META]: { tags, ...(permissions ? { permissions } : {}) } } };
}

interface StdioPackage extends Record<string, unknown> {
  version: string;
}

function stdioPackage(
  registryType: 'npm' | 'pypi',
  identifier: string,
  version: string,
  extra: Record<string, unknown> = {},
): StdioPackage {
  return { registryType, identifier, version, transport: { type: 'stdio' }, ...extra };
}

/**
 * An entry for a server of the modelcontextprotocol/servers repository: one package, whose
 * version is the entry's, named `io.github.modelcontextprotocol/<id>` and tagged `reference`.
 */
function reference(server: {
  id: string;
  title: string;
  description: string;
  pkg: StdioPackage;
  tags: string[];
  permissions: 'none' | 'network';
}): Record<string, unknown> {
  return {
    name: `io.github.modelcontextprotocol/${server.id}`,
    title: server.title,
    description: server.description,
    version: server.pkg.version,
    repository: REFERENCE_REPO,
    packages: [server.pkg],
    _meta: moat(['reference', ...server.tags], server.permissions),
  };
}

export const CATALOG_SOURCE = 'the built-in catalog';

export const CATALOG = {
  servers: [
    reference({
      id: 'everything',
      title: 'Everything',
      description: 'Reference test server exercising every MCP feature: tools, resources, prompts, sampling',
      pkg: stdioPackage('npm', '@modelcontextprotocol/server-everything', '2026.8.31'),
      tags: ['testing', 'demo'],
      permissions: 'none',
    }),
    reference({
      id: 'fetch',
      title: 'Fetch',
      description: 'Fetches a URL from the web and returns its content as markdown',
      pkg: stdioPackage('pypi', 'mcp-server-fetch', '2026.10.24'),
      tags: ['web', 'http', 'markdown'],
      permissions: 'network',
    }),
    reference({
      id: 'time',
      title: 'Time',
      description: 'Current time and conversions between IANA time zones',
      pkg: stdioPackage('pypi', 'mcp-server-time', '2026.10.19'),
      tags: ['time', 'timezone'],
      permissions: 'none',
    }),
    reference({
      id: 'filesystem',
      title: 'Filesystem',
      description: 'Reads, writes and searches files under the directories it is given (mount them with -v)',
      pkg: stdioPackage('npm', '@modelcontextprotocol/server-filesystem', '2026.8.31', {
        packageArguments: [
          {
            type: 'positional',
            valueHint: 'allowed_directory',
            value: '/projects',
            description: 'Directory the server may use; mount a host directory there with -v',
          },
        ],
      }),
      tags: ['files', 'filesystem'],
      permissions: 'none',
    }),
    reference({
      id: 'memory',
      title: 'Memory',
      description: 'Knowledge-graph memory: entities, relations and observations kept in a JSON file',
      pkg: stdioPackage('npm', '@modelcontextprotocol/server-memory', '2026.8.31', {
        environmentVariables: [
          {
            name: 'MEMORY_FILE_PATH',
            description: 'Where the knowledge graph is stored',
            default: '/tmp/memory.jsonl',
          },
        ],
      }),
      tags: ['memory', 'knowledge-graph'],
      permissions: 'none',
    }),
    reference({
      id: 'sequential-thinking',
      title: 'Sequential Thinking',
      description: 'Structured step-by-step problem solving through revisable thought sequences',
      pkg: stdioPackage('npm', '@modelcontextprotocol/server-sequential-thinking', '2026.8.31'),
      tags: ['reasoning', 'thinking'],
      permissions: 'none',
    }),
    reference({
      id: 'git',
      title: 'Git',
      description: 'Reads and changes a Git repository: status, diff, log, commit, branches',
      pkg: stdioPackage('pypi', 'mcp-server-git', '2026.10.19', {
        packageArguments: [
          {
            type: 'named',
            name: '--repository',
            value: '/repo',
            description: 'Repository path in the container; mount it with -v',
          },
        ],
      }),
      tags: ['git', 'vcs'],
      permissions: 'none',
    }),
    {
      name: 'io.github.github/github',
      title: 'GitHub (remote)',
      description: "GitHub's hosted MCP server: repositories, issues, pull requests, Actions",
      repository: { url: 'https://github.com/github/github-mcp-server', source: 'github' },
      remotes: [
        {
          type: 'streamable-http',
          url: 'https://api.githubcopilot.com/mcp/',
          headers: [
            {
              name: 'Authorization',
              description: 'Bearer followed by a GitHub personal access token',
              isRequired: true,
              isSecret: true,
            },
          ],
        },
      ],
      _meta: moat(['remote', 'github', 'git', 'issues']),
    },
    {
      name: 'com.cloudflare/docs',
      title: 'Cloudflare Docs (remote)',
      description: "Searches Cloudflare's developer documentation",
      remotes: [{ type: 'streamable-http', url: 'https://docs.mcp.cloudflare.com/mcp' }],
      _meta: moat(['remote', 'docs', 'cloudflare']),
    },
    {
      name: 'com.deepwiki/deepwiki',
      title: 'DeepWiki (remote)',
      description: 'Answers questions about public GitHub repositories from their generated wikis',
      remotes: [{ type: 'streamable-http', url: 'https://mcp.deepwiki.com/mcp' }],
      _meta: moat(['remote', 'docs', 'github']),
    },
  ],
};
