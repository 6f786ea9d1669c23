/**
 * What a tool needs to go through the proxy, and what the proxy trusts
 * upstream: `vault-cli proxy` (and `proxy env`) and `run` build both from
 * here, so a tool configured by hand and an agent under `run` see the same
 * block.
 */
import { readFileSync } from 'node:fs';
import { getCACertificates } from 'node:tls';
import { VaultError } from '../core/errors.js';
/**
 * Every variable in common use that names the file a client trusts instead
 * of (not beside) the system store: each gets the bundle (system roots plus
 * the proxy CA), whatever the user had, so no tool is left on a store that
 * does not know the proxy's leaves.
 */
export const CA_BUNDLE_VARS = [
    'SSL_CERT_FILE', // OpenSSL, Python ssl/urllib, Ruby, Go, rustls-native-certs, uv
    'REQUESTS_CA_BUNDLE', // Python requests (and conda)
    'CURL_CA_BUNDLE', // curl, and requests when REQUESTS_CA_BUNDLE is unset
    'GIT_SSL_CAINFO', // git
    'PIP_CERT', // pip (wins over REQUESTS_CA_BUNDLE)
    'AWS_CA_BUNDLE', // AWS CLI and SDKs (botocore)
    'HTTPLIB2_CA_CERTS', // httplib2 (Google's older Python clients)
    'GRPC_DEFAULT_SSL_ROOTS_FILE_PATH', // gRPC core (Python, Ruby, C++)
    'CLOUDSDK_CORE_CUSTOM_CA_CERTS_FILE', // gcloud
    'NIX_SSL_CERT_FILE', // Nix
    'DENO_CERT', // Deno
    'CARGO_HTTP_CAINFO', // cargo
    'NPM_CONFIG_CAFILE', // npm (replaces its CA list)
    'npm_config_cafile', // npm reads either spelling
];
/** What a proxy-aware client should reach directly: this machine's loopback. */
export const NO_PROXY = ['localhost', '127.0.0.1', '::1'];
/**
 * The proxy and CA block of a tool's environment (docs/proxy.md): `proxy env`
 * prints it, `run` puts it into the child's environment. `proxyCaDir`: a
 * directory holding only the CA, for SSL_CERT_DIR (OpenSSL and Go read it
 * beside SSL_CERT_FILE; a user's own directory is replaced by it).
 * `noProxy`: the hosts reached directly, NO_PROXY by default.
 */
export function proxyEnv(url, paths, noProxy = NO_PROXY) {
    const bundle = paths.proxyCaBundle;
    const direct = noProxy.join(',');
    return [
        ['HTTPS_PROXY', url],
        ['https_proxy', url],
        ['HTTP_PROXY', url],
        ['http_proxy', url],
        ['NO_PROXY', direct],
        ['no_proxy', direct],
        ['NODE_USE_ENV_PROXY', '1'],
        ['NODE_EXTRA_CA_CERTS', paths.proxyCa],
        ...CA_BUNDLE_VARS.map((k) => [k, bundle]),
        ...(paths.proxyCaDir === undefined
            ? []
            : [['SSL_CERT_DIR', paths.proxyCaDir]]),
    ];
}
/**
 * What upstream servers are verified against: the system roots (the bundle
 * file `systemRoots`, or Node's copy of the system store), plus each
 * `--upstream-ca` file.
 * @throws VaultError VLT-1002 when an `--upstream-ca` file cannot be read.
 */
export function upstreamRoots(systemRoots, extraFiles) {
    let roots;
    try {
        roots = [readFileSync(systemRoots, 'utf8')];
    }
    catch {
        roots = getCACertificates('system');
    }
    const extra = extraFiles.map((f) => {
        try {
            return readFileSync(f, 'utf8');
        }
        catch {
            throw new VaultError('VLT-1002', `Cannot read the CA file ${JSON.stringify(f)}.`);
        }
    });
    return [...roots, ...extra];
}
