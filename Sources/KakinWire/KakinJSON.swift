public import Foundation

/// The JSON settings of the API, the same on both sides: keys sorted, slashes not escaped, dates
/// as integer milliseconds since 1970 (answers carry dates as `Int64` fields already).
public enum KakinJSON {
    /// An encoder with the API's settings.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }

    /// A decoder with the API's settings.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }

    /// Milliseconds since 1970, rounded: how answers write a date.
    public static func epochMilliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// The date of an epoch-milliseconds value.
    public static func date(epochMilliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(epochMilliseconds) / 1000)
    }
}
