import Foundation
public import Logging

/// A swift-log handler that writes one JSON object per line to standard output:
/// `{"time", "level", "label", "message", …metadata}`, for log collectors.
public struct JSONLogHandler: LogHandler {
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
        var object: [String: Any] = [:]
        for (key, value) in merged { object[key] = Self.json(value) }
        object["time"] = ISO8601DateFormatter.string(
            from: Date(), timeZone: TimeZone(identifier: "UTC")!,
            formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        object["level"] = event.level.rawValue
        object["label"] = label
        object["message"] = "\(event.message)"
        guard
            var line = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return }
        line.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(line)
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
