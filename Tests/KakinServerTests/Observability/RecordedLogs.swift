import Logging
import Synchronization

/// Every line a logger wrote, as `level message key=value …` (metadata sorted by key).
final class RecordedLogs: Sendable {
    let lines = Mutex<[String]>([])

    /// Whether any line contains `text`.
    func contain(_ text: String) -> Bool {
        lines.withLock { $0.contains { $0.contains(text) } }
    }
}

/// Writes every line to ``RecordedLogs``.
struct RecordedLogHandler: LogHandler {
    let logs: RecordedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        all.merge(event.metadata ?? [:]) { _, new in new }
        let line = "\(event.level) \(event.message) \(all.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))"
        logs.lines.withLock { $0.append(line) }
    }
}
