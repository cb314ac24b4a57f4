import AppStoreModels
import Foundation

/// Structural comparison of two JSON documents that names every difference.
enum JSONComparison {
    /// Parses JSON bytes into a ``JSONValue``.
    static func parse(_ data: Data) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// Every difference between `expected` and `actual`, as readable lines such as
    /// `dropped $.advancedCommerceInfo` or `changed $.price: 10990 → 10991`. Empty when equal.
    ///
    /// Numbers compare by value, with a tolerance of a thousandth for fractional numbers: dates with
    /// fractional milliseconds pass through `Date`, which cannot keep every last binary digit.
    static func differences(expected: JSONValue, actual: JSONValue, path: String = "$") -> [String] {
        switch (expected, actual) {
        case (.object(let left), .object(let right)):
            var found: [String] = []
            for key in left.keys.sorted() {
                guard let rightValue = right[key] else {
                    found.append("dropped \(path).\(key)")
                    continue
                }
                found += differences(expected: left[key]!, actual: rightValue, path: "\(path).\(key)")
            }
            for key in right.keys.sorted() where left[key] == nil {
                found.append("added \(path).\(key)")
            }
            return found
        case (.array(let left), .array(let right)):
            guard left.count == right.count else {
                return ["changed \(path): \(left.count) elements → \(right.count) elements"]
            }
            return zip(left, right).enumerated().flatMap { index, pair in
                differences(expected: pair.0, actual: pair.1, path: "\(path)[\(index)]")
            }
        default:
            if let left = expected.doubleValue, let right = actual.doubleValue {
                let exact = expected.integerValue != nil && actual.integerValue != nil
                let tolerance = exact ? 0 : 0.001
                return abs(left - right) <= tolerance ? [] : ["changed \(path): \(expected) → \(actual)"]
            }
            return expected == actual ? [] : ["changed \(path): \(expected) → \(actual)"]
        }
    }
}

/// Decoding, re-encoding and decoding again, as every model must survive.
enum RoundTrip {
    /// The result of putting JSON through a model type.
    struct Outcome<Model> {
        /// The model decoded from the original JSON.
        var first: Model
        /// The model decoded from the re-encoded JSON.
        var second: Model
        /// Differences between the original JSON and the re-encoded JSON.
        var differences: [String]
    }

    /// Decodes `data` as `Model`, encodes it, decodes it again, and compares the JSON documents.
    static func run<Model: Codable>(_ type: Model.Type, _ data: Data) throws -> Outcome<Model> {
        let first = try JSONDecoder().decode(Model.self, from: data)
        let encoded = try JSONEncoder().encode(first)
        let second = try JSONDecoder().decode(Model.self, from: encoded)
        let differences = JSONComparison.differences(
            expected: try JSONComparison.parse(data), actual: try JSONComparison.parse(encoded))
        return Outcome(first: first, second: second, differences: differences)
    }

    /// ``run(_:_:)`` for JSON written as a string.
    static func run<Model: Codable>(_ type: Model.Type, _ json: String) throws -> Outcome<Model> {
        try run(type, Data(json.utf8))
    }
}
