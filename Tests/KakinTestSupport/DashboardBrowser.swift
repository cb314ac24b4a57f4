import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// A browser on the dashboard: keeps the cookies the server sets, fills in forms, signs in.
public struct Browser: Sendable {
    /// The name of the dashboard's session cookie.
    public static let sessionCookie = "kakin_session"

    /// The cookies kept so far, by name.
    public var cookies: [String: String] = [:]

    /// A browser without cookies.
    public init() {}

    /// The `Cookie` header with every cookie kept.
    public var cookieHeader: HTTPFields {
        var fields = HTTPFields()
        if !cookies.isEmpty {
            fields[.cookie] = cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
        }
        return fields
    }

    /// Keeps the cookies `response` sets (an empty value removes one).
    public mutating func keep(_ response: TestResponse) {
        for header in response.headers[values: .setCookie] {
            let pair = header.split(separator: ";")[0].split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                .map(String.init)
            guard pair.count == 2 else { continue }
            cookies[pair[0]] = pair[1].isEmpty ? nil : pair[1]
        }
    }

    /// GETs `uri` with the cookies, and keeps the ones the answer sets.
    public mutating func get(_ uri: String, _ client: some TestClientProtocol) async throws -> TestResponse {
        let response = try await client.execute(uri: uri, method: .get, headers: cookieHeader)
        keep(response)
        return response
    }

    /// POSTs `fields` as a form to `uri` with the cookies, and keeps the ones the answer sets.
    public mutating func post(
        _ uri: String, _ fields: [String: String], _ client: some TestClientProtocol
    ) async throws -> TestResponse {
        var headers = cookieHeader
        headers[.contentType] = "application/x-www-form-urlencoded"
        let body = fields.sorted { $0.key < $1.key }.map { key, value in
            "\(Self.encode(key))=\(Self.encode(value))"
        }.joined(separator: "&")
        let response = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
        keep(response)
        return response
    }

    /// `text` percent-encoded for a form body.
    public static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The value of the last hidden `csrf` field on a page (the page's own forms come after the
    /// header's sign-out form).
    public static func csrf(in response: TestResponse) -> String? {
        let html = String(buffer: response.body)
        guard let range = html.range(of: "name=\"csrf\" value=\"", options: .backwards) else { return nil }
        let token = String(html[range.upperBound...].prefix { $0 != "\"" })
        return token.isEmpty ? nil : token
    }

    /// Signs in with `password`; returns the session's CSRF token.
    public mutating func signIn(_ password: String, _ client: some TestClientProtocol) async throws -> String? {
        let form = try await get("/dashboard/login", client)
        let token = try #require(Self.csrf(in: form))
        let answer = try await post("/dashboard/login", ["csrf": token, "password": password], client)
        guard answer.status == .seeOther, cookies[Self.sessionCookie] != nil else { return nil }
        return Self.csrf(in: try await get("/dashboard", client))
    }
}
