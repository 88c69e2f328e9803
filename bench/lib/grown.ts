/** Growing the typed arrays that benchmarks keep their samples and records in, outside V8's heap. */

/** A copy of `a` in an array of twice its length, or more until it holds `atLeast` elements. */
export function grown<T extends Buffer | Uint32Array | Float64Array>(a: T, atLeast = a.length + 1): T {
  let size = Math.max(1, a.length * 2)
  while (size < atLeast) size *= 2
  const b = (Buffer.isBuffer(a) ? Buffer.allocUnsafe(size) : new (a.constructor as new (n: number) => T)(size)) as T
  b.set(a)
  return b
}
