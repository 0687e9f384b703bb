/**
 * The window-lock store SPI: {@link io.reactivelocks.spi.window.WindowStore} decides, atomically
 * on the store, whether a caller is the first of a window. The engine in
 * {@code io.reactivelocks.internal.window} checks arguments, times requests and computes deadlines.
 */
@NullMarked
package io.reactivelocks.spi.window;

import org.jspecify.annotations.NullMarked;
