import Foundation
import KakinLedger

/// Reads a JSON configuration strictly: every value is checked as it is read, any value may be
/// `env:NAME` to come from the environment, and a key nobody read is refused. Every failure is
/// one line that starts with the key's path (`apps[0].appStoreServerAPI.keyId: …`).
final class ConfigurationReader {
    let path: String
    private let object: [String: Any]
    private let environment: [String: String]
    private var read: Set<String> = []

    init(_ object: [String: Any], path: String, environment: [String: String]) {
        self.object = object
        self.path = path
        self.environment = environment
    }

    /// The root object of a JSON document.
    static func root(_ data: Data, environment: [String: String]) throws(ServerError) -> ConfigurationReader {
        guard let parsed = try? JSONSerialization.jsonObject(with: data), let object = parsed as? [String: Any] else {
            throw ServerError(.invalidConfiguration, "the configuration is not a JSON object")
        }
        return ConfigurationReader(object, path: "", environment: environment)
    }

    func keyPath(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func failure(_ key: String, _ message: String) -> ServerError {
        ServerError(.invalidConfiguration, "\(keyPath(key)): \(message)")
    }

    /// The raw value, with `env:NAME` replaced by the variable's value.
    private func value(_ key: String) throws(ServerError) -> Any? {
        read.insert(key)
        guard let value = object[key], !(value is NSNull) else { return nil }
        if let text = value as? String, text.hasPrefix("env:") {
            let name = String(text.dropFirst(4))
            guard let resolved = environment[name] else {
                throw failure(key, "the environment variable \(name) is not set")
            }
            return resolved
        }
        return value
    }

    func string(_ key: String) throws(ServerError) -> String? {
        guard let value = try value(key) else { return nil }
        guard let text = value as? String, !text.isEmpty else { throw failure(key, "expected a non-empty string") }
        return text
    }

    func requiredString(_ key: String) throws(ServerError) -> String {
        guard let text = try string(key) else { throw failure(key, "is required") }
        return text
    }

    func integer(_ key: String, in range: ClosedRange<Int64>) throws(ServerError) -> Int64? {
        guard let value = try value(key) else { return nil }
        let number: Int64?
        if let text = value as? String {
            number = Int64(text)
        } else if let value = value as? NSNumber, String(cString: value.objCType) != "c",
            value.doubleValue == value.doubleValue.rounded()
        {
            number = value.int64Value
        } else {
            number = nil
        }
        guard let number, range.contains(number) else {
            throw failure(key, "expected an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    func boolean(_ key: String) throws(ServerError) -> Bool? {
        guard let value = try value(key) else { return nil }
        if let text = value as? String, let flag = Bool(text) { return flag }
        if let number = value as? NSNumber, String(cString: number.objCType) == "c" { return number.boolValue }
        throw failure(key, "expected true or false")
    }

    func url(_ key: String) throws(ServerError) -> URL? {
        guard let text = try string(key) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
            url.host != nil
        else { throw failure(key, "expected an http or https URL; found \(text)") }
        return url
    }

    func choice<T: RawRepresentable>(_ key: String, _ type: T.Type, allowed: [T]) throws(ServerError) -> T?
    where T.RawValue == String {
        guard let text = try string(key) else { return nil }
        guard let value = T(rawValue: text), allowed.contains(where: { $0.rawValue == value.rawValue }) else {
            throw failure(key, "expected one of \(allowed.map(\.rawValue).joined(separator: ", ")); found \(text)")
        }
        return value
    }

    func object(_ key: String) throws(ServerError) -> ConfigurationReader? {
        guard let value = try value(key) else { return nil }
        guard let object = value as? [String: Any] else { throw failure(key, "expected an object") }
        return ConfigurationReader(object, path: keyPath(key), environment: environment)
    }

    func array(_ key: String) throws(ServerError) -> [Any] {
        guard let value = try value(key) else { return [] }
        guard let array = value as? [Any] else { throw failure(key, "expected a list") }
        return array
    }

    func objects(_ key: String) throws(ServerError) -> [ConfigurationReader] {
        var readers: [ConfigurationReader] = []
        for (index, element) in try array(key).enumerated() {
            guard let object = element as? [String: Any] else {
                throw failure("\(key)[\(index)]", "expected an object")
            }
            readers.append(ConfigurationReader(object, path: "\(keyPath(key))[\(index)]", environment: environment))
        }
        return readers
    }

    /// ``strings(_:)``, or `nil` when the key is absent (so that an empty list can mean none).
    func optionalStrings(_ key: String) throws(ServerError) -> [String]? {
        guard try value(key) != nil else { return nil }
        return try strings(key)
    }

    func strings(_ key: String) throws(ServerError) -> [String] {
        var strings: [String] = []
        for (index, element) in try array(key).enumerated() {
            guard var text = element as? String, !text.isEmpty else {
                throw failure("\(key)[\(index)]", "expected a non-empty string")
            }
            if text.hasPrefix("env:") {
                let name = String(text.dropFirst(4))
                guard let resolved = environment[name] else {
                    throw failure("\(key)[\(index)]", "the environment variable \(name) is not set")
                }
                text = resolved
            }
            strings.append(text)
        }
        return strings
    }

    /// Every key of the object, each a number above zero (a table of rates).
    func positiveNumbers() throws(ServerError) -> [String: Double] {
        var numbers: [String: Double] = [:]
        for key in object.keys.sorted() {
            guard let value = try value(key) else { throw failure(key, "expected a number above zero") }
            let number: Double?
            if let text = value as? String { number = Double(text) } else if let value = value as? NSNumber,
                String(cString: value.objCType) != "c"
            {
                number = value.doubleValue
            } else {
                number = nil
            }
            guard let number, number > 0, number.isFinite else { throw failure(key, "expected a number above zero") }
            numbers[key] = number
        }
        return numbers
    }

    /// Refuses keys nobody read: a typo never passes silently.
    func finish() throws(ServerError) {
        if let unknown = object.keys.filter({ !read.contains($0) }).sorted().first {
            throw ServerError(.invalidConfiguration, "\(keyPath(unknown)): unknown key")
        }
    }
}
