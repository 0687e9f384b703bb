package io.reactivelocks.test.server;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * The parts of a server URL from an environment variable: {@code scheme://[user[:password]@]host[:port][/path]}.
 * A prefix such as {@code jdbc:} or {@code r2dbc:} is ignored.
 */
record ServerUrl(String user, String password, String host, int port, String path) {

    static ServerUrl parse(String variable, String url, int defaultPort) {
        String text = url.trim();
        for (String prefix : new String[] {"jdbc:", "r2dbc:"}) {
            if (text.startsWith(prefix)) {
                text = text.substring(prefix.length());
            }
        }
        if (!text.contains("://")) {
            text = "tcp://" + text;
        }
        try {
            URI uri = new URI(text);
            if (uri.getHost() == null) {
                throw new IllegalArgumentException(variable + "='" + url + "' has no host");
            }
            String user = null;
            String password = null;
            String info = uri.getUserInfo();
            if (info != null) {
                int colon = info.indexOf(':');
                if (colon < 0) {
                    user = info;
                } else {
                    user = colon == 0 ? null : info.substring(0, colon);
                    password = info.substring(colon + 1);
                }
            }
            String path = uri.getPath() == null || uri.getPath().length() <= 1 ? null : uri.getPath().substring(1);
            return new ServerUrl(user, password, uri.getHost(), uri.getPort() < 0 ? defaultPort : uri.getPort(), path);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(variable + "='" + url + "' is not a URL: " + e.getMessage(), e);
        }
    }
}
