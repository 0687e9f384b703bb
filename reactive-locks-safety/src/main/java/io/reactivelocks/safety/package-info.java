/**
 * Safety harness: worker JVMs contend for locks on one backend while the harness injects one
 * kind of fault; every critical section reads and writes a counter on a fenced arbiter, and the
 * run is checked for stale writes accepted, lost updates, token order, validity and leftovers.
 */
@NullMarked
package io.reactivelocks.safety;

import org.jspecify.annotations.NullMarked;
