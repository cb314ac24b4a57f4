import Foundation
import Synchronization
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The root package's `kakin serve` in a process of its own: the purchase server and its sandbox
/// App Store on two free loopback ports, with a data folder and the example catalog in a scratch
/// folder that is removed when the process is stopped.
///
/// The catalog is the example's own (`Examples/Catalog/Kakin.storekit` and its grants), with one
/// offer code added to a copy of its side file (`KAKINSHOP`: three months of Premium Monthly at
/// 0.99 each), so that a redemption can be tested without changing what `kakin serve` sells by
/// default.
final class KakinServe: Sendable {
    /// The `kakin` executable: `KAKIN_EXECUTABLE`, or the root package's debug build
    /// (`../../.build/debug/kakin` from this package); `nil` when it is not there.
    static let executable: URL? = {
        let path =
            ProcessInfo.processInfo.environment["KAKIN_EXECUTABLE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? repository.appendingPathComponent(".build/debug/kakin").path
        let url = URL(fileURLWithPath: path).standardizedFileURL
        return FileManager.default.isExecutableFile(atPath: url.path) ? url : nil
    }()

    /// Why the tests that need `kakin serve` are skipped.
    static let absent: Comment = """
        the kakin binary is not built, so the model is not tested against kakin serve: run \
        `swift build --product kakin` in the repository's root (or scripts/example-test), or set \
        KAKIN_EXECUTABLE to a kakin binary
        """

    /// The repository's root: this file is Examples/KakinShop/Tests/KakinShopModelTests/Support/….
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The bundle ID `kakin serve` sells for.
    static let bundleID = "com.example.kakin"
    /// The offer code the test catalog adds, and the offer it unlocks.
    static let offerCode = "KAKINSHOP"
    static let codeOfferID = "shop3months"

    let process: Process
    let serverURL: URL
    let sandboxURL: URL
    let publishableKey: String
    let secretKey: String
    /// The scratch folder: the server's data, the catalog copy, and the devices' storage.
    let directory: URL
    private let errors: TextBuffer

    private init(
        process: Process, serverURL: URL, sandboxURL: URL, publishableKey: String, secretKey: String, directory: URL,
        errors: TextBuffer
    ) {
        self.process = process
        self.serverURL = serverURL
        self.sandboxURL = sandboxURL
        self.publishableKey = publishableKey
        self.secretKey = secretKey
        self.directory = directory
        self.errors = errors
    }

    /// Runs `body` with a fresh `kakin serve` (given `arguments` besides the ports, data and
    /// catalog), and stops it afterwards, whatever `body` did.
    @MainActor
    static func with<Result>(
        _ arguments: [String] = [], _ body: (KakinServe) async throws -> Result
    ) async throws -> Result {
        let serve = try await start(arguments)
        defer { serve.stop() }
        return try await body(serve)
    }

    /// Starts `kakin serve` and returns once its banner says both ports are open. A port found
    /// free may be taken by another test before the server binds it: the server then exits at
    /// once saying so, and is started again on other ports.
    static func start(_ arguments: [String]) async throws -> KakinServe {
        let executable = try #require(executable, absent)
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("kakin-shop-\(UUID().uuidString)", isDirectory: true)
        let catalog = try writeCatalog(in: directory)
        for attempt in 1...5 {
            let port = try freePort()
            var sandboxPort = try freePort()
            while sandboxPort == port { sandboxPort = try freePort() }
            let process = Process()
            process.executableURL = executable
            process.arguments =
                [
                    "serve", "--port", "\(port)", "--sandbox-port", "\(sandboxPort)",
                    "--data", directory.appendingPathComponent("data").path, "--catalog", catalog.path,
                    "--grants", repository.appendingPathComponent("Examples/Catalog/Kakin.grants.json").path,
                ] + arguments
            process.currentDirectoryURL = directory
            let output = Pipe()
            let errorOutput = Pipe()
            process.standardOutput = output
            process.standardError = errorOutput
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let errors = TextBuffer()
            errors.drain(errorOutput.fileHandleForReading)
            let banner = try await readBanner(output.fileHandleForReading, of: process)
            guard let banner else {
                process.waitUntilExit()
                errors.waitForEnd()
                if attempt < 5, errors.text.contains("already in use") { continue }
                Issue.record("kakin serve ended (\(process.terminationStatus)) before it started: \(errors.text)")
                throw CancellationError()
            }
            func value(after label: String) throws -> String {
                let line = banner.split(separator: "\n").first { $0.contains(label) }
                return String(try #require(line?.split(separator: " ").last, "no \(label) in \(banner)"))
            }
            return KakinServe(
                process: process, serverURL: URL(string: "http://127.0.0.1:\(port)")!,
                sandboxURL: URL(string: "http://127.0.0.1:\(sandboxPort)")!,
                publishableKey: try value(after: "publishable key:"), secretKey: try value(after: "secret key:"),
                directory: directory, errors: errors)
        }
        throw CancellationError()
    }

    /// Stops the server (SIGTERM), waits for it, and removes the scratch folder.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The standard output up to the banner's last line (printed once both ports are open), or `nil`
    /// when the process ended first. The pipe is read on a thread of its own, with blocking reads,
    /// and handed over as it comes: no polling.
    private static func readBanner(_ handle: FileHandle, of process: Process) async throws -> String? {
        let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
        Thread.detachNewThread {
            while case let data = handle.availableData, !data.isEmpty { continuation.yield(data) }
            continuation.finish()
        }
        return try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                var text = ""
                for await chunk in chunks {
                    text += String(decoding: chunk, as: UTF8.self)
                    if text.contains("sandbox access:") { return text }
                }
                return nil
            }
            group.addTask {
                // A bound, not a wait: a server that never starts fails the test instead of hanging it.
                try await Task.sleep(for: .seconds(120))
                Issue.record("kakin serve printed no banner within two minutes")
                throw CancellationError()
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// A copy of the example catalog with the test's offer code added to its side file.
    private static func writeCatalog(in directory: URL) throws -> URL {
        let catalogs = directory.appendingPathComponent("catalog", isDirectory: true)
        try FileManager.default.createDirectory(at: catalogs, withIntermediateDirectories: true)
        let examples = repository.appendingPathComponent("Examples/Catalog")
        let storeKit = catalogs.appendingPathComponent("Kakin.storekit")
        try FileManager.default.copyItem(at: examples.appendingPathComponent("Kakin.storekit"), to: storeKit)
        let sideFile = try Data(contentsOf: examples.appendingPathComponent("Kakin.catalog.json"))
        var options = try #require(try JSONSerialization.jsonObject(with: sideFile) as? [String: Any])
        let monthly = "com.example.kakin.premium.monthly"
        options["codeOffers"] = [
            monthly: [
                [
                    "offerID": codeOfferID, "paymentMode": "payAsYouGo", "subscriptionPeriod": "P1M",
                    "numberOfPeriods": 3, "displayPrice": "0.99", "internalID": "7B2E0C01",
                    "referenceName": "Shop Three Months",
                ]
            ]
        ]
        options["offerCodes"] = [offerCode: ["productID": monthly, "offerID": codeOfferID]]
        try JSONSerialization.data(withJSONObject: options, options: [.prettyPrinted, .sortedKeys])
            .write(to: catalogs.appendingPathComponent("Kakin.catalog.json"))
        return storeKit
    }
}

/// Text collected from a pipe by a thread of its own.
final class TextBuffer: Sendable {
    private let collected = Mutex("")
    private let done = DispatchSemaphore(value: 0)

    var text: String { collected.withLock { $0 } }

    /// Reads `handle` to its end in the background.
    func drain(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while case let data = handle.availableData, !data.isEmpty {
                collected.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
            done.signal()
        }
    }

    /// Waits until the pipe ended (the process exited and its output was read).
    func waitForEnd() {
        _ = done.wait(timeout: .now() + 30)
    }
}

/// A loopback port free right now (bound, read and released).
func freePort() throws -> Int {
    #if canImport(Glibc)
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
    #endif
    defer { close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
        }
    }
    guard bound else { throw CancellationError() }
    return Int(UInt16(bigEndian: address.sin_port))
}
