import { describe, expect, it } from 'vitest';
import { runConfigSchema, type RunConfigInput } from '../config/runconfig.js';
import { telemetrySettings } from './settings.js';

const config = (telemetry: RunConfigInput['telemetry_config'], extra: Partial<RunConfigInput> = {}) =>
  runConfigSchema.parse({
    image: 'img',
    name: 'fetch',
    transport: 'streamable-http',
    host: '127.0.0.1',
    port: 0,
    telemetry_config: telemetry,
    ...extra,
  });

describe('telemetrySettings', () => {
  it('is off without an endpoint or the Prometheus path', () => {
    expect(telemetrySettings(config(undefined))).toBeUndefined();
    expect(telemetrySettings(config({ serviceName: 'x', samplingRate: '0.5' }))).toBeUndefined();
  });

  it('applies the defaults: moat-<workload>, sampling 0.1, legacy names, https for host:port', () => {
    const s = telemetrySettings(config({ endpoint: 'collector:4318' }));
    expect(s).toMatchObject({
      serviceName: 'moat-fetch',
      samplingRate: 0.1,
      useLegacyAttributes: true,
      traces: { protocol: 'http', baseUrl: 'https://collector:4318' },
      metrics: { protocol: 'http', baseUrl: 'https://collector:4318' },
    });
    expect(s?.prometheus).toBeUndefined();
  });

  it('exports over gRPC when asked, and names the field for an unknown protocol', () => {
    const s = telemetrySettings(config({ endpoint: 'collector:4317', protocol: 'grpc' }));
    expect(s?.traces).toMatchObject({ protocol: 'grpc', baseUrl: 'https://collector:4317' });
    const parsed = runConfigSchema.safeParse({
      image: 'img',
      name: 'fetch',
      transport: 'stdio',
      host: '127.0.0.1',
      port: 0,
      telemetry_config: { endpoint: 'c:1', protocol: 'thrift' },
    });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues[0]?.path)).toBe('["telemetry_config","protocol"]');
  });

  it('honours insecure, the switches, a full URL and the Prometheus port', () => {
    const s = telemetrySettings(
      config({
        endpoint: 'collector:4318',
        insecure: true,
        tracingEnabled: false,
        enablePrometheusMetricsPath: true,
        prometheusPort: 9999,
        metricsOnTransportPort: false,
      }),
    );
    expect(s?.traces).toBeUndefined();
    expect(s?.metrics?.baseUrl).toBe('http://collector:4318');
    expect(s?.prometheus).toEqual({ host: '127.0.0.1', port: 9999, onTransportPort: false });
    expect(telemetrySettings(config({ endpoint: 'http://c:1/otlp/' }))?.traces?.baseUrl).toBe(
      'http://c:1/otlp',
    );
  });

  it('names the field and the allowed range for a bad sampling rate', () => {
    expect(() => telemetrySettings(config({ endpoint: 'c:1', samplingRate: '1.5' }))).toThrow(
      'telemetry_config.samplingRate: must be a number from 0.0 to 1.0, got "1.5"',
    );
    expect(() => telemetrySettings(config({ endpoint: 'c:1', samplingRate: 'often' }))).toThrow(
      /samplingRate/,
    );
  });

  it('reads named variables from the server environment, and refuses secret targets', () => {
    const s = telemetrySettings(
      config(
        { endpoint: 'c:1', environmentVariables: ['REGION', 'HOSTNAME_X', 'MISSING'] },
        { env_vars: { REGION: 'eu' } },
      ),
      { HOSTNAME_X: 'node-1' },
    );
    expect(s?.environmentAttributes).toEqual({
      'environment.REGION': 'eu',
      'environment.HOSTNAME_X': 'node-1',
    });
    expect(() =>
      telemetrySettings(
        config(
          { endpoint: 'c:1', environmentVariables: ['API_KEY'] },
          { secrets: ['github,target=API_KEY'] },
        ),
      ),
    ).toThrow(/API_KEY holds a secret/);
  });
});
