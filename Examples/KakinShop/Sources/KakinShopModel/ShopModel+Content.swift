public import Foundation
public import Kakin
import KakinWire

/// One product with hosted content, as the downloads screen lists it.
public struct ContentItem: Identifiable, Hashable, Sendable {
    /// The product ID.
    public var id: String
    /// The product's localized name, or its ID before the products are loaded.
    public var name: String
    /// Whether the customer owns it now (the server grants its content only then).
    public var isOwned: Bool
    /// The download under way or last made on this device, if any.
    public var download: ContentDownload?
    /// Where its unpacked content is on this device, if it is.
    public var contentURL: URL?

    /// Makes an item (the model does; previews by hand).
    public init(id: String, name: String, isOwned: Bool, download: ContentDownload? = nil, contentURL: URL? = nil) {
        self.id = id
        self.name = name
        self.isOwned = isOwned
        self.download = download
        self.contentURL = contentURL
    }

    /// Whether the download button is offered: owned, not on the device, and not downloading.
    public var canDownload: Bool {
        guard isOwned, contentURL == nil else { return false }
        guard let state = download?.state else { return true }
        return state != .waiting && state != .active
    }
}

/// Hosted content: the purchase server serves a product's package to customers it grants it to;
/// the SDK's ``DownloadManager`` fetches it in resumable chunks with progress, checks its SHA-256
/// and unpacks it, before the purchase's transaction is finished.
extension ShopModel {
    /// The products with hosted content, in the paywall's order, with what is on this device.
    public var contentItems: [ContentItem] {
        let products = store?.products ?? []
        let owned = Set(paywall.items.filter(\.isOwned).map(\.id))
        let known = products.map(\.id).filter { contentProductIDs.contains($0) }
        let rest = contentProductIDs.subtracting(known).sorted()
        return (known + rest).map { id in
            ContentItem(
                id: id, name: products.first { $0.id == id }?.displayName ?? id, isOwned: owned.contains(id),
                download: downloads[id], contentURL: installedContent[id])
        }
    }

    /// Downloads the content of `productID`, which the customer owns, onto this device (a new
    /// device after a restore, content deleted from the caches): from the byte a paused or
    /// failed download reached, if there is one.
    public func download(_ productID: String) async {
        guard let store, let manager = downloadManager else { return }
        isWorking = true
        defer { isWorking = false }
        do {
            let (url, headers) = try await store.server.contentRequest(productID: productID, appUserID: store.appUserID)
            downloads[productID] = await manager.start(ContentRequest(productID: productID, url: url, headers: headers))
        } catch {
            report(.failed(PaymentError(error)))
        }
    }

    /// Pauses the download of `productID`; ``resumeDownload(_:)`` continues it.
    public func pauseDownload(_ productID: String) async {
        guard let id = downloads[productID]?.id, let manager = downloadManager else { return }
        if let paused = await manager.pause(id) { downloads[productID] = paused }
    }

    /// Resumes a paused download of `productID`, or a failed one that can be retried.
    public func resumeDownload(_ productID: String) async {
        guard let id = downloads[productID]?.id, let manager = downloadManager else { return }
        if let resumed = await manager.resume(id) { downloads[productID] = resumed }
    }

    /// Cancels the download of `productID` and deletes what it fetched.
    public func cancelDownload(_ productID: String) async {
        guard let id = downloads[productID]?.id, let manager = downloadManager else { return }
        if let cancelled = await manager.cancel(id) { downloads[productID] = cancelled }
    }

    /// Deletes the unpacked content of `productID` from this device (it can be downloaded again).
    public func deleteContent(_ productID: String) async {
        guard let manager = downloadManager else { return }
        do {
            try await manager.deleteContent(forProductID: productID)
            installedContent[productID] = nil
        } catch {
            report(.problem("The content of \(productID) could not be deleted: \(error)"))
        }
    }

    /// The products whose grants in the server's catalog include hosted content.
    nonisolated static func contentProducts(of catalog: CatalogAnswer) -> Set<String> {
        Set(catalog.products.filter { $0.grants.contains { $0.content == true } }.map(\.productId))
    }

    /// What the SDK downloads after the server acknowledged a purchase and before finishing it:
    /// the content the purchase server hosts for products that carry some, asked for the user the
    /// purchase was delivered for (again at each attempt, so a retry carries a fresh customer
    /// token). The first delivery of a launch comes before the shop read the catalog: then the
    /// catalog is asked here.
    func hostedContent(_ manager: DownloadManager, locale: String) -> KakinStore.HostedContent {
        KakinStore.HostedContent(downloads: manager) { [weak self] transaction, appUserID, server in
            var products = await self?.contentProductIDs ?? []
            if products.isEmpty { products = Self.contentProducts(of: try await server.catalog(locale: locale)) }
            guard products.contains(transaction.productID) else { return nil }
            let (url, headers) = try await server.contentRequest(productID: transaction.productID, appUserID: appUserID)
            return ContentRequest(
                productID: transaction.productID, url: url, headers: headers, transactionID: transaction.id)
        }
    }

    /// Keeps the download manager and follows every download's events.
    func followDownloads(_ manager: DownloadManager) async {
        downloadManager = manager
        // Subscribed before the shop starts any download; what the launch's first deliveries
        // downloaded already is in the snapshot below.
        let events = await manager.events()
        for download in await manager.downloads() { downloads[download.productID] = download }
        downloadEvents = Task { [weak self] in
            for await event in events {
                self?.apply(event)
            }
        }
    }

    /// Keeps the latest snapshot of a download, and where its content went once it finished.
    private func apply(_ event: DownloadEvent) {
        let download = event.download
        downloads[download.productID] = download
        if download.state == .finished, let url = download.contentURL { installedContent[download.productID] = url }
    }

    /// Reads which content products are unpacked on this device.
    func refreshInstalledContent() async {
        guard let manager = downloadManager else { return }
        var installed: [String: URL] = [:]
        for productID in contentProductIDs {
            if let url = await manager.contentURL(forProductID: productID) { installed[productID] = url }
        }
        installedContent = installed
    }
}
