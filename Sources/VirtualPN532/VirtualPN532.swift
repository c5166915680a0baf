// VirtualPN532: layer placeholder, replaced as the layer lands.
