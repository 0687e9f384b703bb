/**
 * The demo application: many workers contending for the same locks on each store, started by demo.sh (not published).
 */
@NullMarked
package io.reactivelocks.examples.demo;

import org.jspecify.annotations.NullMarked;
