#include "CKakinSQLite.h"

/* The SQLite that sqlite-nio builds into the same binary, with its symbol prefix. */
#include <sqlite_nio_sqlite3.h>

#include <pthread.h>
#include <stdlib.h>

int kakin_sqlite_enable_qpsg(void *connection) {
    int enabled = 0;
    return sqlite_nio_sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_ENABLE_QPSG, 1, &enabled);
}

/* MARK: The page cache */

/* SQLite's own page cache, which does the work. */
static sqlite3_pcache_methods2 basePageCache;

/* A cache of SQLite's own, and what it may hold above the end of the database.

   SQLite asks a cache to drop the pages past the end of the database at the end of every write
   transaction. Its own cache remembers only the highest page number it ever held, and when the drop
   starts below that, scans its whole hash table. A B-tree split that reorders pages moves one
   through a scratch number far past the end (the lock page, 262,145 with 4 KiB pages) and back, so
   from the first such split on, every commit scanned the whole cache (8,192 pages on the writer).
   This cache notes the highest number a page was fetched with, and the scratch numbers a page was
   moved to and not yet moved away from, and skips the drop when nothing can be past the end. */
typedef struct KakinPageCache {
    sqlite3_pcache *inner;
    /* No page was fetched with a higher number since the last drop that went through. */
    unsigned highestFetched;
    /* Numbers above `highestFetched` that a page was moved to and may still have. */
    unsigned moved[8];
    int movedCount;
    /* More moves than `moved` holds: every drop goes through until the next one that does. */
    int lostTrack;
} KakinPageCache;

#define INNER_CACHE(cache) (((KakinPageCache *)(cache))->inner)

static int pageCacheInit(void *argument) {
    (void)argument;
    return basePageCache.xInit(basePageCache.pArg);
}

static void pageCacheShutdown(void *argument) {
    (void)argument;
    if (basePageCache.xShutdown != NULL) basePageCache.xShutdown(basePageCache.pArg);
}

static sqlite3_pcache *pageCacheCreate(int pageSize, int extraSize, int purgeable) {
    KakinPageCache *cache = calloc(1, sizeof(KakinPageCache));
    if (cache == NULL) return NULL;
    cache->inner = basePageCache.xCreate(pageSize, extraSize, purgeable);
    if (cache->inner == NULL) {
        free(cache);
        return NULL;
    }
    return (sqlite3_pcache *)cache;
}

static void pageCacheSize(sqlite3_pcache *cache, int size) {
    basePageCache.xCachesize(INNER_CACHE(cache), size);
}

static int pageCachePageCount(sqlite3_pcache *cache) {
    return basePageCache.xPagecount(INNER_CACHE(cache));
}

static sqlite3_pcache_page *pageCacheFetch(sqlite3_pcache *handle, unsigned key, int create) {
    KakinPageCache *cache = (KakinPageCache *)handle;
    sqlite3_pcache_page *page = basePageCache.xFetch(cache->inner, key, create);
    if (page != NULL && key > cache->highestFetched) cache->highestFetched = key;
    return page;
}

static void pageCacheUnpin(sqlite3_pcache *cache, sqlite3_pcache_page *page, int discard) {
    basePageCache.xUnpin(INNER_CACHE(cache), page, discard);
}

static void pageCacheRekey(sqlite3_pcache *handle, sqlite3_pcache_page *page, unsigned oldKey, unsigned newKey) {
    KakinPageCache *cache = (KakinPageCache *)handle;
    basePageCache.xRekey(cache->inner, page, oldKey, newKey);
    for (int index = 0; index < cache->movedCount; index++) {
        if (cache->moved[index] == oldKey) {
            cache->moved[index] = cache->moved[--cache->movedCount];
            break;
        }
    }
    if (newKey <= cache->highestFetched) return;
    if (cache->movedCount < (int)(sizeof(cache->moved) / sizeof(cache->moved[0]))) {
        cache->moved[cache->movedCount++] = newKey;
    } else {
        cache->lostTrack = 1;
    }
}

static void pageCacheTruncate(sqlite3_pcache *handle, unsigned limit) {
    KakinPageCache *cache = (KakinPageCache *)handle;
    int mayHold = cache->lostTrack || limit <= cache->highestFetched;
    for (int index = 0; !mayHold && index < cache->movedCount; index++) {
        if (cache->moved[index] >= limit) mayHold = 1;
    }
    if (!mayHold) return;
    basePageCache.xTruncate(cache->inner, limit);
    /* Every page left is below `limit`. */
    cache->highestFetched = limit > 0 ? limit - 1 : 0;
    cache->movedCount = 0;
    cache->lostTrack = 0;
}

static void pageCacheDestroy(sqlite3_pcache *handle) {
    KakinPageCache *cache = (KakinPageCache *)handle;
    basePageCache.xDestroy(cache->inner);
    free(cache);
}

static void pageCacheShrink(sqlite3_pcache *cache) {
    if (basePageCache.xShrink != NULL) basePageCache.xShrink(INNER_CACHE(cache));
}

static const sqlite3_pcache_methods2 kakinPageCache = {
    1, NULL, pageCacheInit, pageCacheShutdown, pageCacheCreate, pageCacheSize, pageCachePageCount,
    pageCacheFetch, pageCacheUnpin, pageCacheRekey, pageCacheTruncate, pageCacheDestroy, pageCacheShrink,
};

static pthread_once_t pageCacheOnce = PTHREAD_ONCE_INIT;
static int pageCacheInstalled;

static void installPageCache(void) {
    if (sqlite_nio_sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &basePageCache) != SQLITE_OK) return;
    if (basePageCache.xCreate == NULL || basePageCache.xFetch == NULL) return;
    pageCacheInstalled = sqlite_nio_sqlite3_config(SQLITE_CONFIG_PCACHE2, &kakinPageCache) == SQLITE_OK;
}

int kakin_sqlite_install_page_cache(void) {
    pthread_once(&pageCacheOnce, installPageCache);
    return pageCacheInstalled;
}
