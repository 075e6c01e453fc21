/**
 * How long processes rest before what they keep is read (their RSS at rest): V8's memory reducer
 * collects within ~20 s of the last allocation, and glibc's malloc hands back what it will by then.
 */
export const AT_REST_MS = 25_000;
