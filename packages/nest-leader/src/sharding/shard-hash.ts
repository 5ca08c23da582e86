/**
 * Which shard a key belongs to: a documented, stable hash any peer (Go, Python, a database
 * query) can compute the same way. Framework-free.
 */

const FNV_OFFSET_BASIS_32 = 0x811c9dc5;
const FNV_PRIME_32 = 0x01000193;
const utf8 = new TextEncoder();

/**
 * FNV-1a, 32 bits (Fowler–Noll–Vo, the `1a` variant: XOR each byte in, then multiply by the
 * prime), over the bytes given. Test vectors: `""` → `0x811c9dc5`, `"a"` → `0xe40c292c`,
 * `"foobar"` → `0xbf9cf968` (as Go's `hash/fnv.New32a`).
 * @returns an unsigned 32-bit integer
 */
export function fnv1a32(bytes: Uint8Array): number {
  let hash = FNV_OFFSET_BASIS_32;
  for (const byte of bytes) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME_32) >>> 0;
  }
  return hash >>> 0;
}

/**
 * The shard of `key` among `shards`: FNV-1a 32 of the key's UTF-8 bytes, modulo `shards`
 * (unsigned). In Go: `h := fnv.New32a(); h.Write([]byte(key)); h.Sum32() % uint32(shards)`;
 * in Python: fold `hash = ((hash ^ b) * 0x01000193) & 0xffffffff` over `key.encode('utf-8')`
 * from `0x811c9dc5`, then `% shards`. Vectors for 1,024 shards: `"order-1"` → 365,
 * `"customer/42"` → 400, `"ü"` → 74.
 * @param key - any string (encoded as UTF-8; lone surrogates become U+FFFD, as `TextEncoder`)
 * @param shards - the number of shards, a whole number ≥ 1 (not checked here: the election
 *   validates it once)
 * @returns a shard number in `[0, shards)`
 */
export function shardOfKey(key: string, shards: number): number {
  return fnv1a32(utf8.encode(key)) % shards;
}
