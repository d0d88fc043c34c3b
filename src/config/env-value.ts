/**
 * A secret or name from the environment less one trailing line end: a
 * variable filled from a file (a Kubernetes Secret key made with
 * --from-file; `nats-auth`'s password files end with one) would otherwise
 * carry it into the password or token, and a login that looks right would
 * be refused. No user name, path, password or token of ours ends with one.
 */
export function envValue(raw: string): string {
  return raw.endsWith('\r\n') ? raw.slice(0, -2) : raw.endsWith('\n') ? raw.slice(0, -1) : raw;
}
