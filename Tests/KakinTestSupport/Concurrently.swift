/// Runs `count` operations with at most `width` at a time; their results in index order.
public func concurrently<T: Sendable>(
    _ count: Int, width: Int, _ operation: @escaping @Sendable (Int) async -> T
) async -> [T] {
    await withTaskGroup(of: (Int, T).self) { group in
        var results: [T?] = Array(repeating: nil, count: count)
        var next = 0
        while next < min(width, count) {
            let index = next
            group.addTask { (index, await operation(index)) }
            next += 1
        }
        for await (index, result) in group {
            results[index] = result
            if next < count {
                let index = next
                group.addTask { (index, await operation(index)) }
                next += 1
            }
        }
        return results.compactMap { $0 }
    }
}
