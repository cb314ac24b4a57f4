public import Foundation
public import Hummingbird

/// JSON answers as the sandbox and the server send them: sorted keys, unescaped slashes, dates as
/// epoch milliseconds (Apple's unit), `application/json; charset=utf-8`.
public enum JSONBody {
    /// The encoded bytes of `value`; `{}` for a value that cannot be encoded.
    public static func encode<T: Encodable>(_ value: T) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    /// A response carrying `value`.
    public static func response<T: Encodable>(
        _ value: T, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    )
        -> Response
    {
        var fields = headers
        fields[.contentType] = "application/json; charset=utf-8"
        return Response(
            status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: encode(value))))
    }
}
