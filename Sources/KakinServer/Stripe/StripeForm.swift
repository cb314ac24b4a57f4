import Foundation
import KakinWire

/// The parameters of one Stripe request, in the form encoding Stripe reads
/// (`application/x-www-form-urlencoded`), with Stripe's bracket syntax for nested names:
/// `metadata[kakin_customer]=…`, `items[0][plan]=…`, `expand[]=…`.
///
/// A field's name is a path: its first part is the parameter, each further part one level of
/// nesting, and an empty part an element of a list (`expand[]`). Each part and each value is
/// percent-encoded, every byte outside RFC 3986's unreserved set (`A–Z a–z 0–9 - . _ ~`) written
/// as `%XX`, so a space is `%20` and a `+` is `%2B`; the brackets around the nested parts are
/// written as they are in a body, and percent-encoded in a URL's query, where RFC 3986 does not
/// allow them. Fields keep the order they were added in; a `nil` value adds nothing.
struct StripeForm: Sendable, Hashable {
    /// One parameter: its name as a path of parts, and its value as text.
    struct Field: Sendable, Hashable {
        /// The name's parts: `["items", "0", "plan"]` is `items[0][plan]`.
        var path: [String]
        /// The value, as Stripe reads it.
        var value: String
    }

    /// The fields, in the order they were added.
    private(set) var fields: [Field] = []

    /// An empty form.
    init() {}

    /// Adds `value` under the name `path`; nothing when `value` is `nil`.
    mutating func append(_ value: String?, at path: String...) {
        guard let value else { return }
        fields.append(Field(path: path, value: value))
    }

    /// Adds a whole number (an amount in minor units, a count) under the name `path`.
    mutating func append(_ value: Int?, at path: String...) {
        guard let value else { return }
        fields.append(Field(path: path, value: String(value)))
    }

    /// Adds `true` or `false` under the name `path`.
    mutating func append(_ value: Bool?, at path: String...) {
        guard let value else { return }
        fields.append(Field(path: path, value: value ? "true" : "false"))
    }

    /// Adds a time as Stripe takes it, whole Unix seconds (a fraction is dropped), under `path`.
    mutating func append(_ value: Date?, at path: String...) {
        guard let value else { return }
        fields.append(Field(path: path, value: String(Int(value.timeIntervalSince1970.rounded(.down)))))
    }

    /// Adds each of `values` as an element of the list `name` (`expand[]=a&expand[]=b`), in order.
    mutating func append(list values: [String], at name: String) {
        for value in values { fields.append(Field(path: [name, ""], value: value)) }
    }

    /// Adds `metadata[key]=value` for each pair, by key in order, so the same metadata always
    /// makes the same body.
    mutating func append(metadata: [String: String]) {
        for key in metadata.keys.sorted() {
            fields.append(Field(path: ["metadata", key], value: metadata[key]!))
        }
    }

    /// Whether the form has no fields.
    var isEmpty: Bool { fields.isEmpty }

    /// The form as a request body: `name=value` pairs joined by `&`, brackets written as they are.
    var body: String { encoded(bracket: ("[", "]")) }

    /// The form as a URL's query (without the `?`): as ``body``, with the brackets percent-encoded.
    var query: String { encoded(bracket: ("%5B", "%5D")) }

    /// The pairs, with each nested part of a name between `bracket`'s two halves.
    private func encoded(bracket: (open: String, close: String)) -> String {
        fields.map { field in
            var name = KakinRoute.encode(field.path.first ?? "")
            for part in field.path.dropFirst() { name += bracket.open + KakinRoute.encode(part) + bracket.close }
            return name + "=" + KakinRoute.encode(field.value)
        }.joined(separator: "&")
    }
}
