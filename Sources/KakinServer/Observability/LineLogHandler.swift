import Foundation
import KakinLedger
public import Logging

/// How a ``LineLogHandler`` writes one event: the line's bytes and where they go.
public protocol LogLineFormat: Sendable {
    /// One event as a line, newline included.
    static func line(
        time: Date, level: Logger.Level, label: String, metadata: Logger.Metadata, source: String, message: String
    ) -> String
    /// Where the lines go.
    static var output: FileHandle { get }
}

/// A swift-log handler that writes one line per event, in the layout of `Format`. The metadata
/// is rendered only when a line is written: the HTTP server sets the request's ID on its logger
/// for every request, whether anything is logged or not.
public struct LineLogHandler<Format: LogLineFormat>: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

    /// Creates the handler of the logger named `label`, as `LoggingSystem.bootstrap` asks for one.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let extra = event.metadata { merged.merge(extra) { _, new in new } }
        let line = Format.line(
            time: Date(), level: event.level, label: label, metadata: merged, source: event.source,
            message: "\(event.message)")
        Format.output.write(Data(line.utf8))
    }
}

/// One JSON object per line on standard output, `{"time", "level", "label", "message",
/// …metadata}`, for log collectors.
public typealias JSONLogHandler = LineLogHandler<JSONLogLine>

/// One line of text per event on standard error, in the layout of swift-log's
/// `StreamLogHandler`: `time level label : key=value … [source] message`. (`StreamLogHandler`
/// itself renders the metadata again every time a key is set.)
public typealias TextLogHandler = LineLogHandler<TextLogLine>

/// The layout of ``JSONLogHandler``.
public enum JSONLogLine: LogLineFormat {
    public static var output: FileHandle { .standardOutput }

    public static func line(
        time: Date, level: Logger.Level, label: String, metadata: Logger.Metadata, source: String, message: String
    ) -> String {
        var object: [String: Any] = [:]
        for (key, value) in metadata { object[key] = json(value) }
        object["time"] = ISO8601DateFormatter.string(
            from: time, timeZone: TimeZone(identifier: "UTC")!,
            formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        object["level"] = level.rawValue
        object["label"] = label
        object["message"] = message
        guard
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return "" }
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    private static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): "\(value)"
        case .array(let values): values.map(json)
        case .dictionary(let values): values.mapValues(json)
        }
    }
}

/// The layout of ``TextLogHandler``.
public enum TextLogLine: LogLineFormat {
    public static var output: FileHandle { .standardError }

    public static func line(
        time: Date, level: Logger.Level, label: String, metadata: Logger.Metadata, source: String, message: String
    ) -> String {
        let rendered = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        let fields = rendered.isEmpty ? "" : " " + rendered
        return "\(timestamp(time)) \(level) \(label) :\(fields) [\(source)] \(message)\n"
    }

    /// `2026-11-24T01:38:02+0000`, in UTC.
    static func timestamp(_ time: Date) -> String {
        var seconds = time_t(time.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))+0000"
    }
}
