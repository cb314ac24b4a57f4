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

    /// Creates a store that looks for `<productID>.zip` in `directory`, or hosts stand-ins only.
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
