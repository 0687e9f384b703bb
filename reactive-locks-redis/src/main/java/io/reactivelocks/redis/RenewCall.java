package io.reactivelocks.redis;

import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.CommandOutput;
import io.lettuce.core.protocol.AsyncCommand;
import io.lettuce.core.protocol.Command;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.reactivelocks.spi.HeldLock;
import io.reactivelocks.spi.RenewRequest;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One call of {@code renew.lua} over a slice of a renewal batch, written straight into Lettuce's
 * output buffer: the keys and grants ({@code <token>:<owner>}) of the slice's leases are encoded
 * from their strings into the buffer once, with no intermediate {@code String} or {@code byte[]}
 * per argument (the key is not built as a string at all for names {@link RedisKeys#tag} leaves
 * as they are), and the reply is read into a {@code boolean[]} (no list of boxed integers). The
 * calls of a batch are dispatched together: one write and one flush on the connection.
 */
final class RenewCall {

    private RenewCall() {
    }

    /**
     * @param batch  the batch
     * @param index  the positions in {@code batch} of this call's leases (all with one lease time)
     * @param from   first position in {@code index}
     * @param to     end (exclusive) in {@code index}
     * @param leaseMs the lease time in ms of every lease of the slice
     * @param prefix the key prefix's UTF-8 bytes
     * @param eval   {@code EVAL} with the source (after a {@code NOSCRIPT}) instead of {@code EVALSHA}
     * @return the command, not yet dispatched; it completes with one flag per lease (renewed or not)
     */
    static AsyncCommand<String, String, boolean[]> command(List<RenewRequest> batch, int[] index, int from, int to,
                                                          long leaseMs, byte[] prefix, boolean eval) {
        Args args = new Args(batch, index, from, to, leaseMs, prefix,
                eval ? SCRIPT_SOURCE : SCRIPT_SHA);
        return new AsyncCommand<>(new Command<>(eval ? CommandType.EVAL : CommandType.EVALSHA, new Reply(), args));
    }

    private static final byte[] SCRIPT_SHA = LuaScript.RENEW.sha().getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SCRIPT_SOURCE = LuaScript.RENEW.source().getBytes(StandardCharsets.UTF_8);
    private static final byte[] LOCK_SUFFIX = "}:lock".getBytes(StandardCharsets.US_ASCII);

    /** The script's arguments: sha (or source), numkeys, the keys, the lease time, the grants. */
    private static final class Args extends CommandArgs<String, String> {
        private final List<RenewRequest> batch;
        private final int[] index;
        private final int from;
        private final int to;
        private final long leaseMs;
        private final byte[] prefix;
        private final byte[] script;

        Args(List<RenewRequest> batch, int[] index, int from, int to, long leaseMs, byte[] prefix, byte[] script) {
            super(StringCodec.UTF8);
            this.batch = batch;
            this.index = index;
            this.from = from;
            this.to = to;
            this.leaseMs = leaseMs;
            this.prefix = prefix;
            this.script = script;
        }

        private HeldLock lock(int i) {
            return batch.get(index[i]).lock();
        }

        @Override
        public int count() {
            return 3 + 2 * (to - from);
        }

        @Override
        public void encode(ByteBuf buf) {
            int n = to - from;
            buf.ensureWritable(64 + script.length + n * 96);
            bulk(buf, script);
            buf.writeByte('$');
            writeDecimal(buf, decimalLength(n));
            crlf(buf);
            writeDecimal(buf, n);
            crlf(buf);
            // Each argument goes into a plain byte[] first and into the buffer a few kilobytes at a time: a
            // ByteBuf's writeByte checks its reference count and bounds on every byte, ~60 times per lease.
            Staging out = STAGING.get().reset();
            for (int i = from; i < to; i++) {
                out.key(buf, prefix, lock(i).name());
            }
            out.flush(buf);
            buf.writeByte('$');
            writeDecimal(buf, decimalLength(leaseMs));
            crlf(buf);
            writeDecimal(buf, leaseMs);
            crlf(buf);
            for (int i = from; i < to; i++) {
                HeldLock l = lock(i);
                out.grant(buf, l.token(), l.owner());
            }
            out.flush(buf);
        }

        private void writeKey(ByteBuf buf, String name) {
            String tag = RedisKeys.isPlain(name) ? name : RedisKeys.tag(name); // ASCII either way
            buf.writeByte('$');
            writeDecimal(buf, prefix.length + 1 + tag.length() + LOCK_SUFFIX.length);
            crlf(buf);
            buf.writeBytes(prefix);
            buf.writeByte('{');
            writeAscii(buf, tag);
            buf.writeBytes(LOCK_SUFFIX);
            crlf(buf);
        }

        @Override
        public ByteBuffer getFirstEncodedKey() {
            // Redis Cluster routes by the first key (a slice shares one slot)
            ByteBuf b = io.netty.buffer.Unpooled.buffer();
            writeKey(b, lock(from).name());
            // strip the "$len\r\n" header and the trailing CRLF
            int start = b.indexOf(0, b.writerIndex(), (byte) '\n') + 1;
            byte[] key = new byte[b.writerIndex() - 2 - start];
            b.getBytes(start, key);
            return ByteBuffer.wrap(key);
        }

        @Override
        public String toString() {
            return "renew.lua over " + (to - from) + " leases";
        }

        @Override
        public String toCommandString() {
            return toString();
        }
    }

    /** One staging array per encoding thread (Lettuce encodes on the connection's event loop). */
    private static final ThreadLocal<Staging> STAGING = ThreadLocal.withInitial(Staging::new);

    /**
     * RESP bulk strings of the keys and grants, written into a plain array and copied into the
     * buffer when it is nearly full ({@link #flush}): the same bytes as writing them into the
     * buffer one by one, at one bounds check per few kilobytes instead of one per byte.
     */
    static final class Staging {
        /** Large enough for dozens of typical arguments; an argument longer than it grows it. */
        private byte[] bytes = new byte[8192];
        private int at;

        /** Stages {@code $<len>\r\n<prefix>{<tag>}:lock\r\n}. */
        void key(ByteBuf buf, byte[] prefix, String name) {
            String tag = RedisKeys.isPlain(name) ? name : RedisKeys.tag(name); // ASCII either way
            int length = prefix.length + 1 + tag.length() + LOCK_SUFFIX.length;
            byte[] b = room(buf, 1 + 20 + 2 + length + 2);
            int p = at;
            b[p++] = '$';
            p = decimal(b, p, length);
            b[p++] = '\r';
            b[p++] = '\n';
            System.arraycopy(prefix, 0, b, p, prefix.length);
            p += prefix.length;
            b[p++] = '{';
            p = ascii(tag, b, p);
            System.arraycopy(LOCK_SUFFIX, 0, b, p, LOCK_SUFFIX.length);
            p += LOCK_SUFFIX.length;
            b[p++] = '\r';
            b[p++] = '\n';
            at = p;
        }

        /** Stages {@code $<len>\r\n<token>:<owner>\r\n}, the owner in UTF-8. */
        void grant(ByteBuf buf, long token, String owner) {
            byte[] utf8 = isAscii(owner) ? null : owner.getBytes(StandardCharsets.UTF_8);
            int ownerLength = utf8 == null ? owner.length() : utf8.length;
            int length = decimalLength(token) + 1 + ownerLength;
            byte[] b = room(buf, 1 + 20 + 2 + length + 2);
            int p = at;
            b[p++] = '$';
            p = decimal(b, p, length);
            b[p++] = '\r';
            b[p++] = '\n';
            p = decimal(b, p, token);
            b[p++] = ':';
            if (utf8 == null) {
                p = ascii(owner, b, p);
            } else {
                System.arraycopy(utf8, 0, b, p, ownerLength);
                p += ownerLength;
            }
            b[p++] = '\r';
            b[p++] = '\n';
            at = p;
        }

        /** @return this, emptied (an encoding that failed half way left nothing to flush into the next one) */
        Staging reset() {
            at = 0;
            return this;
        }

        /** Copies what is staged into {@code buf}; called after the last argument of a run. */
        void flush(ByteBuf buf) {
            if (at > 0) {
                buf.writeBytes(bytes, 0, at);
                at = 0;
            }
        }

        private byte[] room(ByteBuf buf, int need) {
            if (at + need > bytes.length) {
                flush(buf);
                if (need > bytes.length) {
                    bytes = new byte[need];
                }
            }
            return bytes;
        }

        /**
         * Copies an ASCII string's characters as bytes at {@code p}; returns the end. The deprecated
         * {@code String.getBytes(int, int, byte[], int)} keeps the low byte of each character, exact for
         * ASCII, and is one array copy for a Latin-1 string instead of a loop over {@code charAt}.
         */
        @SuppressWarnings("deprecation")
        private static int ascii(String s, byte[] b, int p) {
            s.getBytes(0, s.length(), b, p);
            return p + s.length();
        }

        /** Writes {@code v} in decimal at {@code p}; returns the end. */
        private static int decimal(byte[] b, int p, long v) {
            if (v < 0) {
                byte[] s = Long.toString(v).getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(s, 0, b, p, s.length);
                return p + s.length;
            }
            int n = decimalLength(v);
            for (int i = p + n - 1; i >= p; i--) {
                b[i] = (byte) ('0' + v % 10);
                v /= 10;
            }
            return p + n;
        }
    }

    /** The script's reply: one integer per lease, 1 when renewed. */
    private static final class Reply extends CommandOutput<String, String, boolean[]> {
        private int next;

        Reply() {
            super(StringCodec.UTF8, new boolean[0]);
        }

        @Override
        public void multi(int count) {
            if (next == 0 && output.length == 0) {
                output = new boolean[Math.max(0, count)];
            }
        }

        @Override
        public void set(long integer) {
            if (next < output.length) {
                output[next] = integer == 1L;
            }
            next++;
        }
    }

    private static void bulk(ByteBuf buf, byte[] bytes) {
        buf.writeByte('$');
        writeDecimal(buf, bytes.length);
        crlf(buf);
        buf.writeBytes(bytes);
        crlf(buf);
    }

    private static void crlf(ByteBuf buf) {
        buf.writeShort(('\r' << 8) | '\n');
    }

    private static boolean isAscii(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) >= 0x80) {
                return false;
            }
        }
        return true;
    }

    private static void writeAscii(ByteBuf buf, String s) {
        ByteBufUtil.writeAscii(buf, s);
    }

    static int decimalLength(long v) {
        if (v < 0) {
            return Long.toString(v).length();
        }
        int n = 1;
        while (v >= 10) {
            v /= 10;
            n++;
        }
        return n;
    }

    /** Writes a number in decimal ASCII. */
    static void writeDecimal(ByteBuf buf, long v) {
        if (v < 0) {
            ByteBufUtil.writeAscii(buf, Long.toString(v));
            return;
        }
        int n = decimalLength(v);
        buf.ensureWritable(n);
        int at = buf.writerIndex();
        for (int i = n - 1; i >= 0; i--) {
            buf.setByte(at + i, (int) ('0' + v % 10));
            v /= 10;
        }
        buf.writerIndex(at + n);
    }
}
