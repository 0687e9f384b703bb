/**
 * The window lock: at most one claim per name and period across the fleet ("run this job once per
 * hour"). {@link io.reactivelocks.window.WindowLock} is the API, {@link io.reactivelocks.window.WindowClaim}
 * a won claim with its fencing token. Stores implement {@link io.reactivelocks.spi.window.WindowStore}.
 */
@NullMarked
package io.reactivelocks.window;

import org.jspecify.annotations.NullMarked;
