import Crypto
public import Foundation
public import Hummingbird

/// Serves bytes the way resumable downloads need: `ETag` (the SHA-256 of the bytes),
/// `Accept-Ranges`, one `Range` per request (206 with `Content-Range`), `If-Range` (a stale tag
/// gets the whole body) and 416 for a range outside the body.
public enum RangedDownload {
    /// The ETag of `bytes`: their SHA-256 in lowercase hex, quoted.
    public static func etag(_ bytes: Data) -> String {
        "\"" + SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// The package, whole or the requested range, with `ETag` (its SHA-256) and `Accept-Ranges`.
    public static func response(_ package: Data, request: Request, contentType: String) -> Response {
        let etag = etag(package)
        var headers: HTTPFields = [.acceptRanges: "bytes", .eTag: etag, .contentType: contentType]
        let range: ByteRange?
        do {
            // A stale If-Range (another version of the package) gets the whole package.
            let ifRange = request.headers[.ifRange]
            range =
                ifRange == nil || ifRange == etag
                ? try ByteRange.parse(request.headers[.range], length: package.count) : nil
        } catch {
            headers[.contentRange] = "bytes */\(package.count)"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        }
        guard let range else {
            headers[.contentLength] = "\(package.count)"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: package)))
        }
        let slice = package[package.startIndex + range.lower...package.startIndex + range.upper]
        headers[.contentRange] = "bytes \(range.lower)-\(range.upper)/\(package.count)"
        headers[.contentLength] = "\(slice.count)"
        return Response(
            status: .partialContent, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: slice)))
    }

}

/// A parsed `Range: bytes=…` header (one range; the form downloads use to resume).
struct ByteRange: Equatable {
    let lower: Int
    let upper: Int

    /// `nil` when there is no header; throws when the range cannot be satisfied.
    static func parse(_ header: String?, length: Int) throws(RangeNotSatisfiable) -> ByteRange? {
        guard let header else { return nil }
        guard header.hasPrefix("bytes="), !header.contains(",") else { throw RangeNotSatisfiable() }
        let spec = header.dropFirst("bytes=".count)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw RangeNotSatisfiable() }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0, length > 0 else { throw RangeNotSatisfiable() }
            return ByteRange(lower: max(0, length - suffix), upper: length - 1)
        }
        guard let lower = Int(parts[0]), lower >= 0, lower < length else { throw RangeNotSatisfiable() }
        let upper = parts[1].isEmpty ? length - 1 : min(length - 1, Int(parts[1]) ?? -1)
        guard upper >= lower else { throw RangeNotSatisfiable() }
        return ByteRange(lower: lower, upper: upper)
    }

    struct RangeNotSatisfiable: Error {}
}
