import ArgumentParser
import Foundation
import Hummingbird
import KakinServer
import KakinLedger
import Logging
import NIOCore
import ServiceLifecycle

/// How the long-running commands (`serve`, `server`) start and stop: one `ServiceGroup` that
/// drains on SIGTERM or SIGINT and exits 0, and start failures reported in one line.
enum ServiceRunner {
    /// Sends swift-log to standard error as text, or to standard output as JSON lines. Once per process.
    static func bootstrapLogging(format: ServerConfiguration.LogFormat, level: String) {
        let logLevel = Logger.Level(rawValue: level) ?? .info
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                format == .json ? JSONLogHandler(label: label) : TextLogHandler(label: label)
            handler.logLevel = logLevel
            return handler
        }
    }

    /// Runs `services` until a signal; a port already in use or a bad start becomes one line and exit 1.
    static func run(_ services: [any Service], logger: Logger, addresses: [String]) async throws {
        // Each connection, each database connection and each file takes a descriptor: take every
        // one the system allows before the first is needed.
        if let (before, after) = ProcessLimits.raiseOpenFileLimit() {
            if after > before {
                logger.info("raised the open-file limit", metadata: ["from": "\(before)", "to": "\(after)"])
            } else {
                logger.info("open-file limit", metadata: ["limit": "\(after)"])
            }
        }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do {
            try await group.run()
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            fail("cannot listen on \(addresses.joined(separator: " or ")): the address is already in use")
        } catch let error as IOError where error.errnoCode == EADDRNOTAVAIL {
            fail("cannot listen on \(addresses.joined(separator: " or ")): no such local address")
        } catch {
            fail("the server stopped: \(error)")
        }
    }

    /// Prints `error: <line>` and exits 1.
    static func fail(_ line: String) -> Never {
        FileHandle.standardError.write(Data("error: \(line)\n".utf8))
        Foundation.exit(1)
    }
}

/// Calls `body` once every one of `count` servers reported its port.
actor StartBarrier {
    private var ports: [String: Int] = [:]
    private let names: [String]
    private let body: @Sendable ([String: Int]) -> Void

    init(names: [String], body: @escaping @Sendable ([String: Int]) -> Void) {
        self.names = names
        self.body = body
    }

    func started(_ name: String, port: Int) {
        ports[name] = port
        if names.allSatisfy({ ports[$0] != nil }) { body(ports) }
    }
}
