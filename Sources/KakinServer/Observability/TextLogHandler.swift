import Foundation
public import Logging

/// A swift-log handler that writes one line of text per event to standard error, in the layout of
/// swift-log's `StreamLogHandler`: `time level label : key=value … [source] message`.
///
/// It renders the metadata only when it writes a line. `StreamLogHandler` renders it again every
/// time a key is set, and the HTTP server sets the request's ID on its logger for every request,
/// whether anything is logged or not.
public struct TextLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String

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
        let line = Self.line(
            time: Date(), level: event.level, label: label, metadata: merged, source: event.source,
            message: "\(event.message)")
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// One event as a line, newline included.
    static func line(
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
