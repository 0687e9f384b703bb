/**
 * {@code reactive-locks}, the command line: run a command while holding a lock or a semaphore
 * permit (its fencing token in the command's environment), list what is held on a store, inspect
 * and watch a lock, force-release a name. The entry point is {@link io.reactivelocks.cli.Main}.
 */
package io.reactivelocks.cli;
