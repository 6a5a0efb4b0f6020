/** Where the proxy pod finds its files: the RunConfig names these paths, the Deployment mounts them. */

export const CONFIG_DIR = '/etc/moat';
export const RUNCONFIG_KEY = 'runconfig.json';
export const RUNCONFIG_PATH = `${CONFIG_DIR}/${RUNCONFIG_KEY}`;

/** Each CA is projected as this one file, so a missing key fails the mount like a missing Secret. */
export const CA_FILE = 'ca.crt';
export const REDIS_CA_DIR = `${CONFIG_DIR}/redis-ca`;
export const REDIS_CA_PATH = `${REDIS_CA_DIR}/${CA_FILE}`;
export const OIDC_CA_DIR = `${CONFIG_DIR}/oidc-ca`;
export const OTEL_CA_DIR = `${CONFIG_DIR}/otel-ca`;

/** The pod's own service-account token and cluster CA (mounted only when OIDC uses cluster auth). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The writable state directory on the read-only root filesystem. */
export const TMP_DIR = '/tmp';
