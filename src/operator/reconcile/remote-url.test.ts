import { describe, expect, it } from 'vitest';
import { checkRemoteUrl } from './remote-url.js';

/** `ok`: allowed; `private`: allowed only with allowPrivateEndpoint; else a message fragment. */
type Expectation = 'ok' | 'private' | RegExp;

const CASES: Array<[url: string, expected: Expectation]> = [
  // Public endpoints and in-cluster names the guard cannot judge without DNS.
  ['https://mcp.example.com/mcp', 'ok'],
  ['http://mcp.example.com:8080/sse', 'ok'],
  ['https://8.8.8.8/mcp', 'ok'],
  ['https://[2001:db8::1]/mcp', 'ok'],
  ['http://backend.team-a.svc:8080/mcp', 'ok'],
  ['http://backend.team-a.svc./mcp', 'ok'],
  ['http://kubernetes-dashboard.tools.svc/mcp', 'ok'],
  ['https://localhost.example.com/mcp', 'ok'],

  // Loopback in every encoding WHATWG URL normalizes.
  ['http://127.0.0.1/mcp', /loopback address, which is always blocked/],
  ['http://127.1/mcp', /loopback address/],
  ['http://2130706433/mcp', /loopback address/],
  ['http://0x7f000001/mcp', /loopback address/],
  ['http://0x7f.0.0.1/mcp', /loopback address/],
  ['http://017700000001/mcp', /loopback address/],
  ['http://0177.0.0.01/mcp', /loopback address/],
  ['http://127.0.0.1./mcp', /loopback address/],
  ['http://１２７.０.０.１/mcp', /loopback address/],
  ['http://[::1]/mcp', /loopback address \(::1\)/],
  ['http://[0:0:0:0:0:0:0:1]:8080/mcp', /loopback address \(::1\)/],
  ['http://[::ffff:127.0.0.1]/mcp', /loopback address/],
  ['http://[::ffff:7f00:1]/mcp', /loopback address/],
  ['http://[::127.0.0.1]/mcp', /loopback address/],
  ['http://[64:ff9b::127.0.0.1]/mcp', /loopback address/],
  ['http://localhost:8080/mcp', /loopback name/],
  ['http://LOCALHOST./mcp', /loopback name/],
  ['http://api.localhost/mcp', /loopback name/],
  ['http://%6c%6f%63%61%6c%68%6f%73%74/mcp', /loopback name/],

  // Unspecified addresses.
  ['http://0.0.0.0/mcp', /unspecified/],
  ['http://0/mcp', /unspecified/],
  ['http://[::]/mcp', /unspecified address/],

  // Link-local and cloud metadata.
  ['http://169.254.169.254/latest/meta-data/', /cloud metadata endpoint/],
  ['http://2852039166/latest/meta-data/', /cloud metadata endpoint/],
  ['http://0xa9fea9fe/', /cloud metadata endpoint/],
  ['http://[::ffff:169.254.169.254]/', /cloud metadata endpoint/],
  ['http://[fd00:ec2::254]/latest/meta-data/', /cloud metadata endpoint/],
  ['http://100.100.100.200/latest/meta-data/', /cloud metadata endpoint/],
  ['http://metadata.google.internal/computeMetadata/v1/', /cloud metadata endpoint/],
  ['http://Metadata.Google.Internal./computeMetadata/v1/', /cloud metadata endpoint/],
  ['http://metadata/computeMetadata/v1/', /cloud metadata endpoint/],
  ['http://169.254.10.1/', /link-local address/],
  ['http://[fe80::1]/', /link-local address/],

  // Multicast, broadcast, reserved.
  ['http://224.0.0.1/', /multicast/],
  ['http://255.255.255.255/', /reserved or broadcast/],
  ['http://[ff02::1]/', /multicast/],

  // The Kubernetes API service, in every spelling.
  ['https://kubernetes.default/api', /Kubernetes API service/],
  ['https://kubernetes.default.svc/api', /Kubernetes API service/],
  ['https://kubernetes.default.svc.cluster.local/api', /Kubernetes API service/],
  ['https://KUBERNETES.Default.SVC.cluster.local./api', /Kubernetes API service/],
  ['https://kubernetes.default.svc.corp.example/api', /Kubernetes API service/],
  ['https://kubernetes/api', /Kubernetes API service/],

  // Private only with allowPrivateEndpoint.
  ['http://10.0.0.5:8080/mcp', 'private'],
  ['http://012.0.0.5/mcp', 'private'],
  ['http://172.16.0.1/mcp', 'private'],
  ['http://172.31.255.255/mcp', 'private'],
  ['http://192.168.1.10/mcp', 'private'],
  ['http://3232235786/mcp', 'private'],
  ['http://100.64.0.1/mcp', 'private'],
  ['http://[::ffff:10.1.2.3]/mcp', 'private'],
  ['http://[fd12:3456::1]/mcp', 'private'],
  ['http://[fc00::1]/mcp', 'private'],
  ['http://backend.team-a.svc.cluster.local:8080/mcp', 'private'],
  ['http://BACKEND.team-a.svc.Cluster.Local./mcp', 'private'],
  // Just outside the private ranges.
  ['http://172.32.0.1/mcp', 'ok'],
  ['http://100.128.0.1/mcp', 'ok'],
  ['http://192.169.0.1/mcp', 'ok'],

  // Malformed or unsupported.
  ['', /must not be empty/],
  ['not a url', /is not a valid URL/],
  ['ftp://mcp.example.com/', /must use http or https, not "ftp"/],
  ['file:///etc/passwd', /must use http or https, not "file"/],
  ['https://user:pass@mcp.example.com/', /must not carry credentials/],
  ['https://token@mcp.example.com/', /must not carry credentials/],
  ['http://1.2.3.4.5/', /is not a valid URL/],
];

describe('checkRemoteUrl', () => {
  it('has a table of at least 30 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)('%s → %s', (url, expected) => {
    const strict = checkRemoteUrl(url, { allowPrivateEndpoint: false });
    const relaxed = checkRemoteUrl(url, { allowPrivateEndpoint: true });
    if (expected === 'ok') {
      expect(strict).toBeUndefined();
      expect(relaxed).toBeUndefined();
    } else if (expected === 'private') {
      expect(strict).toMatch(/set spec\.allowPrivateEndpoint: true to allow it/);
      expect(relaxed).toBeUndefined();
    } else {
      // Blocked whatever allowPrivateEndpoint says.
      expect(strict).toMatch(expected);
      expect(relaxed).toMatch(expected);
      expect(strict).toMatch(/^spec\.remoteUrl /);
    }
  });
});
