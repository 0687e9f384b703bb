/**
 * The window-lock engine: the one implementation of {@link io.reactivelocks.window.WindowLock}
 * over a {@link io.reactivelocks.spi.window.WindowStore}. Not API.
 */
@NullMarked
package io.reactivelocks.internal.window;

import org.jspecify.annotations.NullMarked;
