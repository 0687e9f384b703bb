package io.reactivelocks.kotlin

import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import reactor.blockhound.BlockingOperationError

/**
 * Proves BlockHound is installed in this test JVM with the coroutine integration: a blocking call
 * in a coroutine on `Dispatchers.Default` (where `withLock` bodies of these tests run) is caught.
 */
class BlockHoundTest {

    @Test
    fun aBlockingCallOnTheDefaultDispatcherIsCaught() {
        val error = runBlocking {
            runCatching {
                withContext(Dispatchers.Default) { CountDownLatch(1).await(10, TimeUnit.MILLISECONDS) }
            }.exceptionOrNull()
        }
        assertThat(error).isInstanceOf(BlockingOperationError::class.java)
    }
}
