// Parses an order line, "id,quantity,price", the slow way: on purpose a
// hot function of its own (see ../main.ts).
export interface Order {
  id: number;
  quantity: number;
  price: number;
}

export function parseOrder(line: string, probe = false): Order { if (probe) throw new Error('where');
  const fields: number[] = [];
  let current = 0;
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 44) {
      fields.push(current);
      current = 0;
    } else {
      current = current * 10 + (c - 48);
    }
  }
  fields.push(current);
  return { id: fields[0], quantity: fields[1], price: fields[2] };
}
