/// A coding key made from any string, for objects whose keys are not all known in advance.
struct DynamicCodingKey: CodingKey, Hashable {
    var stringValue: String
    var intValue: Int? { nil }

    init(_ stringValue: String) { self.stringValue = stringValue }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == DynamicCodingKey {
    /// Every member whose key is not in `known`, as raw JSON.
    func decodeExtras(excluding known: Set<String>) throws -> [String: JSONValue] {
        var extras: [String: JSONValue] = [:]
        for key in allKeys where !known.contains(key.stringValue) {
            extras[key.stringValue] = try decode(JSONValue.self, forKey: key)
        }
        return extras
    }
}

extension KeyedEncodingContainer where Key == DynamicCodingKey {
    /// Writes `extras` back, skipping keys a typed property has already written.
    mutating func encodeExtras(_ extras: [String: JSONValue], excluding known: Set<String>) throws {
        for (key, value) in extras where !known.contains(key) {
            try encode(value, forKey: DynamicCodingKey(key))
        }
    }
}
