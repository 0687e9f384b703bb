package io.reactivelocks.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.protocol.AsyncCommand;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.RenewRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What {@link RenewCall} writes on the wire: the script's arguments as RESP bulk strings. No server needed. */
class RenewCallTest {

    private static final byte[] PREFIX = "rl:".getBytes(StandardCharsets.US_ASCII);
    private final RedisKeys keys = new RedisKeys("rl:");

    @Test
    void writesEveryKeyAndGrantAsItsOwnBulkStringThroughStagingFlushesAndGrowth() {
        List<RenewRequest> batch = new ArrayList<>();
        for (int i = 0; i < 300; i++) { // more than one staging array's worth: flushes in the middle
            batch.add(new RenewRequest(new HeldLock("lock." + "x".repeat(40) + "." + i, "owner-" + i, i * 1_000_003L),
                    Duration.ofSeconds(30)));
        }
        batch.add(new RenewRequest(new HeldLock("{é} *?", "ownér", 0L), Duration.ofSeconds(30))); // tagged name, UTF-8 owner
        batch.add(new RenewRequest(new HeldLock("n".repeat(20_000), "o".repeat(9_000), Long.MAX_VALUE),
                Duration.ofSeconds(30))); // longer than the staging array: it grows
        batch.add(new RenewRequest(new HeldLock("last", "🔒", 7L), Duration.ofSeconds(30)));
        int[] index = new int[batch.size()];
        for (int i = 0; i < index.length; i++) {
            index[i] = index.length - 1 - i; // the slice's order, not the batch's
        }
        int from = 1;
        int to = index.length;

        List<String> args = encode(RenewCall.command(batch, index, from, to, 30_000, PREFIX, false));

        int n = to - from;
        List<String> expected = new ArrayList<>();
        expected.add(LuaScript.RENEW.sha());
        expected.add(Integer.toString(n));
        for (int i = from; i < to; i++) {
            expected.add(keys.lock(batch.get(index[i]).lock().name()));
        }
        expected.add("30000");
        for (int i = from; i < to; i++) {
            HeldLock l = batch.get(index[i]).lock();
            expected.add(l.token() + ":" + l.owner());
        }
        assertThat(args).containsExactlyElementsOf(expected);
        // a second call on the same thread reuses the staging array and starts empty
        assertThat(encode(RenewCall.command(batch, index, 0, 1, 5, PREFIX, false)))
                .containsExactly(LuaScript.RENEW.sha(), "1", keys.lock("last"), "5", "7:🔒");
    }

    /** @return the bulk strings of the command's arguments, decoded as UTF-8 */
    private static List<String> encode(AsyncCommand<String, String, boolean[]> command) {
        ByteBuf buf = Unpooled.buffer();
        command.getArgs().encode(buf);
        assertThat(command.getArgs().count()).isEqualTo(countBulks(buf.duplicate()));
        List<String> out = new ArrayList<>();
        while (buf.isReadable()) {
            assertThat((char) buf.readByte()).isEqualTo('$');
            int lf = buf.indexOf(buf.readerIndex(), buf.writerIndex(), (byte) '\n');
            int length = Integer.parseInt(buf.toString(buf.readerIndex(), lf - 1 - buf.readerIndex(), StandardCharsets.US_ASCII));
            buf.readerIndex(lf + 1);
            out.add(buf.toString(buf.readerIndex(), length, StandardCharsets.UTF_8));
            buf.skipBytes(length);
            assertThat(buf.readByte()).isEqualTo((byte) '\r');
            assertThat(buf.readByte()).isEqualTo((byte) '\n');
        }
        return out;
    }

    private static int countBulks(ByteBuf buf) {
        int count = 0;
        while (buf.isReadable()) {
            buf.readByte();
            int lf = buf.indexOf(buf.readerIndex(), buf.writerIndex(), (byte) '\n');
            int length = Integer.parseInt(buf.toString(buf.readerIndex(), lf - 1 - buf.readerIndex(), StandardCharsets.US_ASCII));
            buf.readerIndex(lf + 1 + length + 2);
            count++;
        }
        return count;
    }
}
