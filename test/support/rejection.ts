/**
 * The error a promise rejects with, for tests that expect a failure: a promise that fulfils fails the test
 * with what it gave (not with an assertion error that a `catch` would then read as the failure).
 */
import { expect } from 'chai'
import { inspect } from 'node:util'

export type Rejection = Error & { code?: unknown; details?: unknown }

export async function rejection(p: Promise<unknown>, what: string): Promise<Rejection> {
  let value: unknown
  try {
    value = await p
  } catch (err) {
    return err as Rejection
  }
  return expect.fail(`${what}: expected a rejection, got ${inspect(value, { depth: 2 })}`)
}

/** `p`'s rejection, checked to carry `code` (a kvlog error code, or a gRPC status number). */
export async function rejectionWithCode(p: Promise<unknown>, code: string | number, what: string): Promise<Rejection> {
  const err = await rejection(p, what)
  expect(err.code, `${what}: the code of ${String(err)}`).to.equal(code)
  return err
}
