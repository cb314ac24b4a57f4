import Foundation
import KakinServer
import KakinLedger

/// Inline SVG charts for the overview: no script, scaled by the browser to any width.
enum DashboardCharts {
    /// One point of a series: a day's label and its value.
    struct Point {
        var label: String
        var value: Double
    }

    static let width = 900.0
    static let height = 240.0
    static let left = 44.0
    static let bottom = 22.0
    static let top = 10.0

    /// Bars, one per point, with the largest value and the first, middle and last labels.
    static func bars(_ points: [Point], title: String, format: (Double) -> String) -> String {
        chart(points, title: title, format: format) { points, x, y, step in
            var marks = ""
            let barWidth = max(step * 0.7, 1)
            for (index, point) in points.enumerated() where point.value > 0 {
                let top = y(point.value)
                marks += "<rect class=\"bar\" x=\"\(n(x(index) - barWidth / 2))\" y=\"\(n(top))\" "
                    + "width=\"\(n(barWidth))\" height=\"\(n(height - bottom - top))\">"
                    + "<title>\(escape("\(point.label): \(format(point.value))"))</title></rect>"
            }
            return marks
        }
    }

    /// A line with the area under it.
    static func line(_ points: [Point], title: String, format: (Double) -> String) -> String {
        chart(points, title: title, format: format) { points, x, y, _ in
            guard !points.isEmpty else { return "" }
            let coordinates = points.enumerated().map { "\(n(x($0.offset))),\(n(y($0.element.value)))" }
            let baseline = n(height - bottom)
            let area =
                "M\(n(x(0))),\(baseline) L" + coordinates.joined(separator: " L")
                + " L\(n(x(points.count - 1))),\(baseline) Z"
            return "<path class=\"area\" d=\"\(area)\"/><polyline class=\"line\" points=\"\(coordinates.joined(separator: " "))\"/>"
        }
    }

    /// The most series one chart draws; the others are left out (the legend says how many).
    static let maxSeries = 6

    /// One line per series, each in its own colour (`s0` to `s5`), on one axis.
    static func lines(_ series: [(name: String, points: [Point])], title: String, format: (Double) -> String) -> String {
        let shown = Array(series.prefix(maxSeries))
        let all = shown.flatMap(\.points)
        let frame = shown.first?.points ?? []
        let scale = max(all.map(\.value).max() ?? 0, 1)
        return chart(frame.map { Point(label: $0.label, value: 0) }, title: title, format: format, maximum: scale) { _, x, y, _ in
            var marks = ""
            for (index, line) in shown.enumerated() where !line.points.isEmpty {
                let coordinates = line.points.enumerated().map { "\(n(x($0.offset))),\(n(y($0.element.value)))" }
                marks += "<polyline class=\"line s\(index)\" points=\"\(coordinates.joined(separator: " "))\">"
                    + "<title>\(escape(line.name))</title></polyline>"
            }
            return marks
        }
    }

    /// The legend of ``lines(_:title:format:)``: each series' name by its colour.
    static func legend(_ names: [String]) -> String {
        var html = "<ul class=\"legend\">"
        for (index, name) in names.prefix(maxSeries).enumerated() {
            html += "<li><span class=\"swatch s\(index)\"></span>\(escape(name.isEmpty ? "all" : name))</li>"
        }
        if names.count > maxSeries { html += "<li class=\"muted\">and \(names.count - maxSeries) more</li>" }
        return html + "</ul>"
    }

    private static func chart(
        _ points: [Point], title: String, format: (Double) -> String,
        maximum scale: Double? = nil, marks: ([Point], (Int) -> Double, (Double) -> Double, Double) -> String
    ) -> String {
        let maximum = scale ?? max(points.map(\.value).max() ?? 0, 1)
        let plotWidth = width - left - 8
        let step = plotWidth / Double(max(points.count, 1))
        let x: (Int) -> Double = { left + step * (Double($0) + 0.5) }
        let y: (Double) -> Double = { top + (height - bottom - top) * (1 - $0 / maximum) }
        let baseline = n(height - bottom)
        var svg = "<svg class=\"chart\" viewBox=\"0 0 \(n(width)) \(n(height))\" role=\"img\" aria-label=\"\(escape(title))\">"
        svg += "<line class=\"axis\" x1=\"\(n(left))\" y1=\"\(baseline)\" x2=\"\(n(width - 8))\" y2=\"\(baseline)\"/>"
        svg += "<line class=\"axis\" x1=\"\(n(left))\" y1=\"\(n(top))\" x2=\"\(n(left))\" y2=\"\(baseline)\"/>"
        svg += "<text x=\"\(n(left - 4))\" y=\"\(n(top + 8))\" text-anchor=\"end\">\(escape(format(maximum)))</text>"
        svg += "<text x=\"\(n(left - 4))\" y=\"\(baseline)\" text-anchor=\"end\">0</text>"
        svg += marks(points, x, y, step)
        let labelled = Set([0, points.count / 2, points.count - 1].filter { $0 >= 0 && $0 < points.count })
        for index in labelled.sorted() {
            svg += "<text x=\"\(n(x(index)))\" y=\"\(n(height - 6))\" text-anchor=\"middle\">\(escape(points[index].label))</text>"
        }
        return svg + "</svg>"
    }

    /// A coordinate with one decimal.
    static func n(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    /// Text made safe for SVG markup.
    static func escape(_ text: String) -> String { HTMLText.escape(text) }
}
