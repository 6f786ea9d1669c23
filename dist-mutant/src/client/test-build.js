/**
 * What a test build of the client accepts that a production build refuses.
 * This file is false in the repository and in every package; only
 * test/support/faults.ts writes a copy of the built tree with it true, in
 * its own temp dir, to drive the owner's commands against a host under the
 * fault-injection shim (docs/development.md). It is a constant in the code
 * the owner runs, not an environment variable: an agent that can set the
 * owner's environment cannot turn it on.
 */
/** Accept a host preloaded with test/support/fault-shim.c (LD_PRELOAD=…/fault-shim.so, FAULT_SHIM_CTL). */
export const ACCEPT_FAULT_SHIM = false;
/**
 * Accept a host under libfaketime (LD_PRELOAD=…/libfaketime…, FAKETIME_*):
 * the tests that move the host's clock (test/support/faketime.ts). Before,
 * VAULT_ACCEPT_FAKETIME=1 in the owner's environment did it: an agent that
 * can set that environment could have the owner's client trust a host whose
 * clock it moves (issue 42). A production build ignores that variable.
 */
export const ACCEPT_FAKETIME = false;
