/**
 * Checkers of recorded safety-run histories (docs/SAFETY.md, "History format"): each takes a parsed
 * {@link io.reactivelocks.safety.check.History} and returns a {@link io.reactivelocks.safety.check.CheckVerdict}
 * with the offending events, independent of the counters the harness keeps while a run goes.
 */
@NullMarked
package io.reactivelocks.safety.check;

import org.jspecify.annotations.NullMarked;
