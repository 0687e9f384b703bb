/**
 * The in-memory backend: the same semantics as the distributed ones (fencing tokens, expiry by
 * the injected scheduler's time, release notifications) inside one JVM, for tests and local
 * development.
 */
@NullMarked
package io.reactivelocks.local;

import org.jspecify.annotations.NullMarked;
