// OfflineUnlock: layer placeholder, replaced as the layer lands.
