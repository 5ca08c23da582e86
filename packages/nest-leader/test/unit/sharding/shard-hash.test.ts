import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fnv1a32, shardOfKey } from 'nest-leader/core';

describe('shardOfKey: FNV-1a 32 of the UTF-8 key, modulo the number of shards', () => {
  test('FNV-1a 32 matches the published test vectors (as Go hash/fnv New32a)', () => {
    const utf8 = (text: string) => new TextEncoder().encode(text);
    assert.equal(fnv1a32(utf8('')), 0x811c9dc5);
    assert.equal(fnv1a32(utf8('a')), 0xe40c292c);
    assert.equal(fnv1a32(utf8('foobar')), 0xbf9cf968);
  });

  test('the documented vectors for 1,024 shards, a non-ASCII key included', () => {
    assert.equal(shardOfKey('order-1', 1024), 365);
    assert.equal(shardOfKey('customer/42', 1024), 400);
    assert.equal(shardOfKey('ü', 1024), 74);
  });

  test('every key lands in [0, shards), and one shard takes every key', () => {
    for (let i = 0; i < 1000; i++) {
      const shard = shardOfKey(`key-${i}`, 7);
      assert.ok(shard >= 0 && shard < 7 && Number.isInteger(shard));
      assert.equal(shardOfKey(`key-${i}`, 1), 0);
    }
  });
});
