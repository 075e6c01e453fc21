/** The compact serialization of a JWS (RFC 7515), as session tokens are written. */

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The protected header of a session token signed with key `kid`, encoded. */
export function jwsHeader(alg: string, kid: string): string {
  return base64url({ alg, kid, typ: "JWT" });
}

/** `header.payload.signature`: the payload is `claims` as JSON, the signature is over the first two. */
export function compactJws(header: string, claims: object, signature: (input: Buffer) => Buffer): string {
  const signingInput = `${header}.${base64url(claims)}`;
  return `${signingInput}.${signature(Buffer.from(signingInput)).toString("base64url")}`;
}
