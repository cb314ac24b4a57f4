import Crypto
public import Foundation

/// The content packages the sandbox hosts, one per product with hosted content.
///
/// A package is the file `<productID>.zip` in the content directory when there is one; otherwise
/// the sandbox makes a deterministic stand-in of the size the catalog declares, so downloads,
/// pauses, resumes and hash checks can be exercised without real content.
public struct HostedContentStore: Sendable {
    /// Where real packages are looked up; `nil` uses stand-ins only.
    public let directory: URL?

    public init(directory: URL? = nil) {
        self.directory = directory
    }

    /// The package for a product, or `nil` when the product has no hosted content.
    public func package(for productID: String, in catalog: SandboxCatalog) -> Data? {
        guard let content = catalog.product(id: productID)?.hostedContent else { return nil }
        if let directory, let data = try? Data(contentsOf: directory.appendingPathComponent("\(productID).zip")) {
            return data
        }
        return Self.standIn(productID: productID, version: content.contentVersion, length: Int(content.contentLength))
    }

    /// Bytes derived from the product and version by chained SHA-256: the same every time.
    static func standIn(productID: String, version: String, length: Int) -> Data {
        var data = Data(capacity: max(0, length))
        var block = Data(SHA256.hash(data: Data("\(productID)@\(version)".utf8)))
        while data.count < length {
            data.append(block.prefix(length - data.count))
            block = Data(SHA256.hash(data: block))
        }
        return data
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
