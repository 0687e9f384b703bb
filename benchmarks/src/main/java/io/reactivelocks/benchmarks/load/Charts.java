package io.reactivelocks.benchmarks.load;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import javax.imageio.ImageIO;

/** Grouped bar charts drawn with Java2D and written as PNG (no plotting library needed). */
final class Charts {

    static final Color FLOOR = new Color(0x9E9E9E);
    /** The hand-written two-request lock (teal). */
    static final Color SIMPLE = new Color(0x00838F);
    static final Color OURS = new Color(0x1565C0);
    /** The raw driver's hand-written handoff, B3's yardstick (dark grey). */
    static final Color RAW_HANDOFF = new Color(0x424242);
    static final Color[] COMPETITORS = {new Color(0xEF6C00), new Color(0x2E7D32), new Color(0xC62828), new Color(0x6A1B9A)};

    /**
     * One panel.
     *
     * @param title    panel title
     * @param yLabel   y axis label
     * @param groups   x groups
     * @param series   bar series (one bar per series in each group)
     * @param colors   one per series
     * @param values   [series][group], NaN for none
     * @param whiskers [series][group] upper whisker (e.g. p99) or null
     */
    record Panel(String title, String yLabel, List<String> groups, List<String> series, List<Color> colors,
                 double[][] values, double[][] whiskers) {
    }

    private Charts() {
    }

    static Color colorOf(Role role, int competitorIndex) {
        return switch (role) {
            case FLOOR -> FLOOR;
            case OURS -> OURS;
            case COMPETITOR -> COMPETITORS[competitorIndex % COMPETITORS.length];
            case SIMPLE -> SIMPLE;
            case RAW_HANDOFF -> RAW_HANDOFF;
        };
    }

    static void write(Path file, String title, List<Panel> panels, int columns) {
        int pw = 640;
        int ph = 400;
        int rows = (panels.size() + columns - 1) / columns;
        int top = 50;
        BufferedImage img = new BufferedImage(pw * columns, top + ph * rows, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, img.getWidth(), img.getHeight());
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.drawString(title, 20, 32);
        for (int i = 0; i < panels.size(); i++) {
            int x = (i % columns) * pw;
            int y = top + (i / columns) * ph;
            panel(g, panels.get(i), x, y, pw, ph);
        }
        g.dispose();
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            ImageIO.write(img, "png", file.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void panel(Graphics2D g, Panel p, int x0, int y0, int w, int h) {
        int left = x0 + 80;
        int right = x0 + w - 20;
        int top = y0 + 52;
        int bottom = y0 + h - 95;
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 14));
        g.setColor(Color.BLACK);
        g.drawString(p.title(), x0 + 20, y0 + 22);
        double maxBar = 0;
        double maxWhisker = 0;
        for (int s = 0; s < p.series().size(); s++) {
            for (int k = 0; k < p.groups().size(); k++) {
                maxBar = Math.max(maxBar, finite(p.values()[s][k]));
                if (p.whiskers() != null) {
                    maxWhisker = Math.max(maxWhisker, finite(p.whiskers()[s][k]));
                }
            }
        }
        // whiskers (p99) may be far above the bars: clip them at 3x the highest bar, their value written at the top
        double max = Math.max(maxBar, Math.min(maxWhisker, 3 * maxBar));
        double step = niceStep(max / 5);
        double axisMax = Math.max(step, Math.ceil(max / step) * step);
        // grid and y labels
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
        FontMetrics fm = g.getFontMetrics();
        for (double v = 0; v <= axisMax + step / 2; v += step) {
            int y = bottom - (int) Math.round((bottom - top) * v / axisMax);
            g.setColor(new Color(0xE0E0E0));
            g.drawLine(left, y, right, y);
            g.setColor(Color.DARK_GRAY);
            String label = label(v);
            g.drawString(label, left - 6 - fm.stringWidth(label), y + 4);
        }
        g.setColor(Color.BLACK);
        g.drawLine(left, top, left, bottom);
        g.drawLine(left, bottom, right, bottom);
        // y axis label, rotated
        Graphics2D r = (Graphics2D) g.create();
        r.rotate(-Math.PI / 2);
        r.drawString(p.yLabel(), -(top + bottom) / 2 - fm.stringWidth(p.yLabel()) / 2, x0 + 16);
        r.dispose();
        int groups = p.groups().size();
        int series = p.series().size();
        double groupWidth = (right - left) / (double) groups;
        double barWidth = groupWidth * 0.8 / series;
        for (int k = 0; k < groups; k++) {
            double gx = left + k * groupWidth + groupWidth * 0.1;
            for (int s = 0; s < series; s++) {
                double v = p.values()[s][k];
                int bx = (int) Math.round(gx + s * barWidth);
                int bw = Math.max(1, (int) Math.round(barWidth) - 2);
                if (!Double.isNaN(v)) {
                    int by = bottom - (int) Math.round((bottom - top) * v / axisMax);
                    g.setColor(p.colors().get(s));
                    g.fillRect(bx, by, bw, bottom - by);
                    g.setColor(Color.BLACK);
                    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
                    String vl = label(v);
                    g.drawString(vl, bx + bw / 2 - g.getFontMetrics().stringWidth(vl) / 2, by - 3);
                    g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                }
                if (p.whiskers() != null && !Double.isNaN(p.whiskers()[s][k])) {
                    double wv = p.whiskers()[s][k];
                    boolean clipped = wv > axisMax;
                    int wy = bottom - (int) Math.round((bottom - top) * Math.min(wv, axisMax) / axisMax);
                    if (clipped) {
                        g.setColor(Color.DARK_GRAY);
                        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 10));
                        String wl = "p99 " + label(wv) + " ↑";
                        g.drawString(wl, bx + bw / 2 - g.getFontMetrics().stringWidth(wl) / 2, top - 4);
                        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 11));
                    }
                    int vy = Double.isNaN(v) ? bottom : bottom - (int) Math.round((bottom - top) * v / axisMax);
                    g.setColor(Color.BLACK);
                    g.setStroke(new BasicStroke(1.2f));
                    int cx = bx + bw / 2;
                    g.drawLine(cx, vy, cx, wy);
                    g.drawLine(cx - bw / 4, wy, cx + bw / 4, wy);
                    g.setStroke(new BasicStroke(1f));
                }
            }
            g.setColor(Color.BLACK);
            String gl = p.groups().get(k);
            g.drawString(gl, (int) (left + k * groupWidth + groupWidth / 2 - fm.stringWidth(gl) / 2.0), bottom + 16);
        }
        // legend below the axis
        int lx = left;
        int ly = bottom + 36;
        for (int s = 0; s < series; s++) {
            String name = p.series().get(s);
            int width = 16 + fm.stringWidth(name) + 14;
            if (lx + width > right && lx > left) {
                lx = left;
                ly += 16;
            }
            g.setColor(p.colors().get(s));
            g.fillRect(lx, ly - 9, 10, 10);
            g.setColor(Color.BLACK);
            g.drawString(name, lx + 14, ly);
            lx += width;
        }
    }

    private static double finite(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? 0 : v;
    }

    private static double niceStep(double raw) {
        if (raw <= 0) {
            return 1;
        }
        double exp = Math.pow(10, Math.floor(Math.log10(raw)));
        double f = raw / exp;
        double nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
        return nice * exp;
    }

    private static String label(double v) {
        if (v >= 1_000_000) {
            return String.format(Locale.ROOT, "%.1fM", v / 1_000_000);
        }
        if (v >= 10_000) {
            return String.format(Locale.ROOT, "%.0fk", v / 1000);
        }
        if (v >= 1000) {
            return String.format(Locale.ROOT, "%.1fk", v / 1000);
        }
        return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }
}
