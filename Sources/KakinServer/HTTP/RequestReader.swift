import AppStoreSecurity
import Foundation
import KakinLedger
import Hummingbird
import KakinHTTP
import KakinWire

/// Reads what a request carries, with the checks every route applies: a JSON body no larger than
/// the server's limit, the app's bundle ID from the query, percent-decoded path parameters, and
/// customer IDs and counts within their bounds. Every failure is a typed ``ServerError``.
struct RequestReader: Sendable {
    /// The largest request body accepted; larger ones get 413.
    let maxBodySize: Int

    /// Reads a JSON body no larger than ``maxBodySize`` (413 beyond it).
    func decode<T: Decodable>(_ type: T.Type, from request: Request) async throws(ServerError) -> T {
        try Self.decodeJSON(T.self, from: try await body(of: request))
    }

    /// Reads a transaction submission, the SDK's most frequent body: through ``FlatJSONObject``
    /// when it is in that simple form, through `JSONDecoder` otherwise.
    func decodeSubmission(from request: Request) async throws(ServerError) -> TransactionSubmission {
        let buffer = try await body(of: request)
        if let submission = TransactionSubmission(flatJSON: buffer.readableBytesView) { return submission }
        return try Self.decodeJSON(TransactionSubmission.self, from: buffer)
    }

    /// The whole body, no larger than ``maxBodySize`` (413 beyond it).
    func body(of request: Request) async throws(ServerError) -> ByteBuffer {
        do { return try await request.body.collect(upTo: maxBodySize) } catch {
            throw ServerError(.payloadTooLarge, "the body is larger than \(maxBodySize) bytes")
        }
    }

    private static func decodeJSON<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws(ServerError) -> T {
        do { return try JSONDecoder().decode(T.self, from: Data(buffer: buffer)) } catch {
            throw ServerError(.invalidRequest, "the body is not a valid request: \(JWSVerifier.describe(error))")
        }
    }

    /// `?bundleId=`, required.
    static func bundleID(_ request: Request) throws(ServerError) -> String {
        guard let bundleID = request.uri.queryParameters.get(KakinQuery.bundleID), !bundleID.isEmpty else {
            throw ServerError(.invalidRequest, "?bundleId= is required")
        }
        return bundleID
    }

    /// A path parameter, percent-decoded (`a%20b` is the customer `a b`).
    static func pathParameter(_ context: KakinRequestContext, _ name: String) throws(ServerError) -> String {
        guard let raw = context.parameters.get(name) else {
            throw ServerError(.invalidRequest, "the path has no \(name)")
        }
        guard raw.utf8.contains(UInt8(ascii: "%")) else { return raw }
        guard let decoded = raw.removingPercentEncoding else {
            throw ServerError(.invalidRequest, "\(name) is not valid percent-encoding")
        }
        return decoded
    }

    /// The customer ID of the path parameter `user`, checked.
    static func customer(_ context: KakinRequestContext) throws(ServerError) -> String {
        let user = try pathParameter(context, "user")
        try checkUserID(user)
        return user
    }

    /// A customer ID is 1 to 256 characters, without line breaks or NUL.
    static func checkUserID(_ user: String) throws(ServerError) {
        guard !user.isEmpty, user.count <= 256, !user.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw ServerError(.invalidRequest, "appUserId must be 1 to 256 characters, without line breaks")
        }
    }

    /// The most a customer answer or a page carries.
    static let maxPageSize = 100

    /// A count from the query (`?limit=`, `?transactions=`): `fallback` when absent, 1 (or 0 when
    /// `allowZero`) to ``maxPageSize`` otherwise.
    static func count(
        _ text: String?, name: String, default fallback: Int, allowZero: Bool = false
    ) throws(ServerError) -> Int {
        guard let text else { return fallback }
        guard let value = Int(text), value >= (allowZero ? 0 : 1), value <= maxPageSize else {
            throw ServerError(.invalidRequest, "\(name) must be a number from \(allowZero ? 0 : 1) to \(maxPageSize)")
        }
        return value
    }

    /// Whether `?include=` asks for each transaction's signed JWS.
    static func includesJWS(_ query: Parameters) -> Bool {
        query.get(KakinQuery.include)?.split(separator: ",").contains("signedTransaction") == true
    }
}
