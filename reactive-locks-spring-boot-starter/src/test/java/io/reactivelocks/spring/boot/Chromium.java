package io.reactivelocks.spring.boot;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A headless Chromium (Debian's {@code chromium-headless-shell}, or {@code chromium}) driven over the DevTools
 * protocol: open a page, evaluate JavaScript in it, take a screenshot. For tests only; blocking.
 */
final class Chromium implements AutoCloseable {

    static final List<String> CANDIDATES = List.of("/usr/lib/chromium/chromium-headless-shell", "/usr/bin/chromium-headless-shell",
            "/usr/bin/chromium", "/usr/lib/chromium/chromium");
    private static final Pattern LISTENING = Pattern.compile("DevTools listening on (ws://\\S+)");
    private static final Duration STEP = Duration.ofSeconds(20);

    private final Process process;
    private final Path profile;
    private final WebSocket socket;
    private final JsonMapper json = JsonMapper.builder().build();
    private final AtomicInteger ids = new AtomicInteger();
    private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();

    private Chromium(Process process, Path profile, WebSocket socket) {
        this.process = process;
        this.profile = profile;
        this.socket = socket;
    }

    /**
     * @param url the page to open
     * @return a browser showing {@code url}
     * @throws AssertionError saying what to install when no Chromium is there
     */
    static Chromium open(String url) throws Exception {
        String binary = CANDIDATES.stream().filter(p -> Files.isExecutable(Path.of(p))).findFirst().orElseThrow(() -> new AssertionError(
                "no headless Chromium at " + CANDIDATES + ": install Debian's chromium-headless-shell "
                        + "(apt-get install --no-install-recommends chromium-headless-shell; .ci/install-servers.sh does)"));
        Path profile = Files.createTempDirectory("chromium-profile");
        Process p = new ProcessBuilder(binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1", "--user-data-dir=" + profile, "about:blank")
                .redirectErrorStream(true).start();
        String browserWs = null;
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        long deadline = System.nanoTime() + STEP.toNanos();
        List<String> seen = new ArrayList<>();
        String line;
        while (System.nanoTime() < deadline && (line = out.readLine()) != null) {
            seen.add(line);
            Matcher m = LISTENING.matcher(line);
            if (m.find()) {
                browserWs = m.group(1);
                break;
            }
        }
        if (browserWs == null) {
            p.destroyForcibly();
            throw new AssertionError("Chromium did not start its DevTools server: " + String.join("\n", seen));
        }
        Thread drain = new Thread(() -> {
            try {
                while (out.readLine() != null) {
                    // keep the pipe empty
                }
            } catch (IOException e) {
                // the browser is gone
            }
        }, "chromium-output");
        drain.setDaemon(true);
        drain.start();
        URI browser = URI.create(browserWs);
        HttpClient http = HttpClient.newHttpClient();
        String target = http.send(HttpRequest.newBuilder(URI.create("http://" + browser.getAuthority() + "/json/new?" + url))
                        .PUT(HttpRequest.BodyPublishers.noBody()).timeout(STEP).build(), HttpResponse.BodyHandlers.ofString()).body();
        String pageWs = JsonMapper.builder().build().readTree(target).get("webSocketDebuggerUrl").asString();
        Chromium[] self = new Chromium[1];
        WebSocket socket = http.newWebSocketBuilder().buildAsync(URI.create(pageWs), new WebSocket.Listener() {
            private final StringBuilder text = new StringBuilder();

            @Override
            public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
                text.append(data);
                if (last) {
                    String message = text.toString();
                    text.setLength(0);
                    self[0].received(message);
                }
                webSocket.request(1);
                return null;
            }
        }).get(STEP.toSeconds(), TimeUnit.SECONDS);
        self[0] = new Chromium(p, profile, socket);
        return self[0];
    }

    private void received(String message) {
        JsonNode node = json.readTree(message);
        if (node.has("id")) {
            CompletableFuture<JsonNode> f = pending.remove(node.get("id").asInt());
            if (f != null) {
                f.complete(node);
            }
        }
    }

    private JsonNode call(String method, Map<String, Object> params) throws Exception {
        int id = ids.incrementAndGet();
        CompletableFuture<JsonNode> answer = new CompletableFuture<>();
        pending.put(id, answer);
        socket.sendText(json.writeValueAsString(Map.of("id", id, "method", method, "params", params)), true).get(STEP.toSeconds(), TimeUnit.SECONDS);
        JsonNode node = answer.get(STEP.toSeconds(), TimeUnit.SECONDS);
        if (node.has("error")) {
            throw new IllegalStateException(method + " failed: " + node.get("error"));
        }
        return node.get("result");
    }

    /**
     * @param expression JavaScript evaluated in the page
     * @return its value as text (a string result as is, anything else as JSON)
     */
    String evaluate(String expression) throws Exception {
        JsonNode result = call("Runtime.evaluate", Map.of("expression", expression, "returnByValue", true)).get("result");
        JsonNode value = result.get("value");
        return value == null ? "undefined" : value.isString() ? value.asString() : value.toString();
    }

    /**
     * @param file where to write a PNG of the page
     */
    void screenshot(Path file) throws Exception {
        call("Emulation.setDeviceMetricsOverride", Map.of("width", 1100, "height", 520, "deviceScaleFactor", 1, "mobile", false));
        String data = call("Page.captureScreenshot", Map.of("format", "png")).get("data").asString();
        Files.createDirectories(file.getParent());
        Files.write(file, Base64.getDecoder().decode(data));
    }

    @Override
    public void close() throws Exception {
        try {
            socket.abort();
        } finally {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
            try (var files = Files.walk(profile)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
            }
        }
    }
}
