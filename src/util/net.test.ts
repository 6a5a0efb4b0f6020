import { describe, expect, it } from 'vitest';
import { embeddedIpv4, isLinkLocalHost, isMetadataHost } from './net.js';

/** The hostname a URL parser makes of `host` (how every caller sees it). */
const hostOf = (host: string): string => new URL(`http://${host}/mcp`).hostname;

describe('address facts', () => {
  it('reads the IPv4 address inside mapped, NAT64 and compatible IPv6 forms', () => {
    expect(embeddedIpv4('::ffff:169.254.169.254')).toBe('169.254.169.254');
    expect(embeddedIpv4('[::ffff:a9fe:a9fe]')).toBe('169.254.169.254');
    expect(embeddedIpv4('64:ff9b::a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIpv4('::ffff:0:a9fe:a9fe')).toBe('169.254.169.254');
    expect(embeddedIpv4('2001:db8::1')).toBeUndefined();
    expect(embeddedIpv4('10.0.0.1')).toBeUndefined();
  });

  it('finds link-local addresses in every spelling a URL allows', () => {
    for (const host of [
      '169.254.169.254',
      '[::ffff:169.254.169.254]',
      '[fe80::1]',
      '2852039166',
      '0xa9fea9fe',
    ]) {
      expect(isLinkLocalHost(hostOf(host)), host).toBe(true);
    }
    for (const host of ['10.0.0.1', '[::1]', 'example.com', '[2001:db8::1]']) {
      expect(isLinkLocalHost(hostOf(host)), host).toBe(false);
    }
  });

  it('knows the cloud metadata endpoints and their encodings', () => {
    for (const host of [
      '169.254.169.254',
      '2852039166', // decimal
      '0xa9.0xfe.0xa9.0xfe', // hex
      '0251.0376.0251.0376', // octal
      '[::ffff:169.254.169.254]',
      '[::ffff:a9fe:a9fe]',
      '[fd00:ec2::254]',
      'metadata.google.internal',
      'METADATA.google.internal.',
      '100.100.100.200',
    ]) {
      expect(isMetadataHost(hostOf(host)), host).toBe(true);
    }
    for (const host of ['127.0.0.1', 'localhost', 'mcp.example.com', '[::1]', '10.1.2.3']) {
      expect(isMetadataHost(hostOf(host)), host).toBe(false);
    }
  });
});
