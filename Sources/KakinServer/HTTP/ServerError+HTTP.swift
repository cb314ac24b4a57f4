import Foundation
import KakinLedger
public import HTTPTypes
public import Hummingbird
import KakinHTTP
import KakinWire

extension ServerError: HTTPResponseError {
    /// The HTTP status of the answer.
    public var status: HTTPResponse.Status { HTTPResponse.Status(code: httpStatus) }

    /// `{"error": {"code", "message", "retryable", "cause"?, "appleStatus"?}}` with the error's
    /// status; a 405 also says which methods the path takes (`Allow`).
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response(allow: nil)
    }

    func response(allow: String?) -> Response {
        var headers: HTTPFields = [:]
        if let allow { headers[.allow] = allow }
        if isRetryable { headers[.retryAfter] = "\(retryAfterSeconds ?? 1)" }
        return JSONBody.response(
            ErrorAnswer(
                error: .init(
                    code: "\(code)", message: message, retryable: isRetryable, cause: cause,
                    appleStatus: appleStatus)),
            status: status, headers: headers)
    }
}
